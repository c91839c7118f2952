"""Conditional accumulators: the gradient aggregation of synchronous replication
(OSDI 2016 §4.4, Figure 4; tf.ConditionalAccumulator, tf.SparseConditionalAccumulator).

An accumulator is a stateful resource like a queue (queue_ops.py): the handle op creates
it on its first run in the device's resource manager under (container, shared_name), or
under a name unique to the op, so every session on a task (every replica of a
between-graph program) that names the same shared accumulator finds the same one. The
take kernels are asynchronous: a take waiting for gradients holds no thread and is
cancelled with its step. The semantics are in accumulator_resources.py.

Op types are TF's: the dense class builds the resource ops (ResourceConditionalAccumulator,
ResourceAccumulatorApplyGradient, ...), as tf.compat.v1 does; the reference-handle ops of
TF1 graphs (ConditionalAccumulator, AccumulatorApplyGradient, ...) run the same kernels,
and the sparse class builds them, as TF does. Handles are `resource` tensors here (TF's
sparse accumulator has a `Ref(string)` handle: tensorweave has no reference dtypes).

Beyond TF: the apply ops take an optional attr `_replica_id` (default -1, unknown), the
index of the replica that computed the gradient, and the op AccumulatorReplicaStatus
reads which replicas contributed to the step being accumulated and when gradients
arrived (used by tf.train.SyncReplicasOptimizer to diagnose a stuck barrier and to
choose the number of backup workers).
"""
from __future__ import annotations

import itertools
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape
from tensorweave.ops.data_flow.accumulator_resources import AccumulatorBase, \
    DenseAccumulator, SparseAccumulator

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator",
           "SparseConditionalAccumulator", "AccumulatorHandle", "lookup_accumulator"]

_UNIQUE = itertools.count()
_REDUCTIONS = ("MEAN", "SUM")


class AccumulatorHandle:
    """The run-time value of an accumulator handle tensor: names the accumulator in one
    device's ResourceManager and holds it."""

    __slots__ = ("container", "name", "manager", "accumulator")

    def __init__(self, container: str, name: str, manager, accumulator: AccumulatorBase):
        self.container, self.name = container, name
        self.manager, self.accumulator = manager, accumulator

    def __repr__(self):
        return "<AccumulatorHandle %s/%s (%s)>" % (self.container or "localhost", self.name,
                                                   self.accumulator.kind)


def lookup_accumulator(ctx, handle, sparse: Optional[bool] = None) -> AccumulatorBase:
    """The accumulator that the run-time value `handle` names.

    Raises:
      InvalidArgumentError: `handle` is not an accumulator handle (of the kind asked).
    """
    if type(handle) is AccumulatorHandle:
        acc = handle.accumulator
        if sparse is None or isinstance(acc, SparseAccumulator) == sparse:
            return acc
    raise errors.InvalidArgumentError(None, getattr(ctx, "op", None),
                                      "Expected a%s accumulator handle, got %r"
                                      % (" sparse" if sparse else "", handle))


# --- declarations ---------------------------------------------------------------------------
def _handle_attrs():
    return {"dtype": TypeAttr(_dt.NUMBERS), "shape": TensorShape(None), "container": "",
            "shared_name": "", "reduction_type": "MEAN"}


def _handle_shape(op):
    return TensorShape([2])  # TF: a handle is a vector of two strings


def _accumulator_shape(op) -> TensorShape:
    """The `shape` attr of the accumulator op that made `op`'s handle (unknown if it
    cannot be traced at build time)."""
    src = op.inputs[0].op
    while src.type == "Identity" and src.inputs:
        src = src.inputs[0].op
    try:
        return as_shape(src._get_attr("shape"))
    except (ValueError, KeyError, AttributeError):
        return unknown_shape()


_DENSE = {"ref": ("ConditionalAccumulator", "AccumulatorApplyGradient",
                  "AccumulatorTakeGradient", "AccumulatorNumAccumulated",
                  "AccumulatorSetGlobalStep"),
          "resource": ("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
                       "ResourceAccumulatorTakeGradient",
                       "ResourceAccumulatorNumAccumulated",
                       "ResourceAccumulatorSetGlobalStep")}

for _make, _apply, _take, _num, _set in _DENSE.values():
    register_op(_make, outputs=["handle: resource"], attrs=_handle_attrs(),
                shape=_handle_shape, stateful=True)
    register_op(_apply, inputs=["handle: resource", "local_step: int64", "gradient: dtype"],
                attrs={"dtype": TypeAttr(_dt.NUMBERS), "_replica_id": -1}, stateful=True,
                shape=lambda op: [])
    register_op(_take, inputs=["handle: resource", "num_required: int32"],
                outputs=["average: dtype"], attrs={"dtype": TypeAttr(_dt.NUMBERS)},
                stateful=True, shape=_accumulator_shape)
    register_op(_num, inputs=["handle: resource"], outputs=["num_accumulated: int32"],
                stateful=True, shape=lambda op: TensorShape([]))
    register_op(_set, inputs=["handle: resource", "new_global_step: int64"],
                stateful=True, shape=lambda op: [])

register_op("SparseConditionalAccumulator", outputs=["handle: resource"],
            attrs=_handle_attrs(), shape=_handle_shape, stateful=True)
register_op("SparseAccumulatorApplyGradient",
            inputs=["handle: resource", "local_step: int64", "gradient_indices: int64",
                    "gradient_values: dtype", "gradient_shape: int64"],
            attrs={"dtype": TypeAttr(_dt.NUMBERS), "has_known_shape": False,
                   "_replica_id": -1}, stateful=True, shape=lambda op: [])
register_op("SparseAccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
            outputs=["indices: int64", "values: dtype", "shape: int64"],
            attrs={"dtype": TypeAttr(_dt.NUMBERS)}, stateful=True,
            shape=lambda op: [unknown_shape()] * 3)
register_op("AccumulatorReplicaStatus", inputs=["handle: resource"],
            outputs=["global_step: int64", "num_accumulated: int32", "contributors: int32",
                     "step_secs: float64", "arrival_steps: int64",
                     "arrival_replicas: int32", "arrival_secs: float64"],
            stateful=True,
            shape=lambda op: [TensorShape([]), TensorShape([]), TensorShape([None]),
                              TensorShape([]), TensorShape([None]), TensorShape([None]),
                              TensorShape([None])])

for _type in (sum(_DENSE.values(), ()) + (
        "SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
        "SparseAccumulatorTakeGradient", "AccumulatorReplicaStatus")):
    not_differentiable(_type)


# --- kernels ------------------------------------------------------------------------------
def _handle_kernel(cls):
    def run(ctx):
        st, a = ctx.state, ctx.attrs
        name = st.get("name")
        if name is None:
            name = st["name"] = a["shared_name"] or "_%d_%s" % (next(_UNIQUE), ctx.op.name)
        shape = a["shape"]
        shape = None if shape.dims is None else tuple(shape.as_list())
        if a["reduction_type"] not in _REDUCTIONS:
            raise errors.InvalidArgumentError(None, ctx.op, "Unsupported reduction_type %r"
                                              % a["reduction_type"])
        acc = ctx.resources.lookup_or_create(
            a["container"], name, lambda: cls(name, a["dtype"], shape, a["reduction_type"]))
        h = st.get("handle")
        if h is not None and h.accumulator is acc and h.manager is ctx.resources:
            return h
        if type(acc) is not cls:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Resource %s/%s is not a %s" % (a["container"] or "localhost",
                                                             name, cls.kind))
        if acc.dtype != a["dtype"] or acc.shape != shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Shared accumulator '%s' has dtype %s and shape %s but "
                "requested dtype %s and shape %s" % (name, acc.dtype.name, _fmt(acc.shape),
                                                     a["dtype"].name, _fmt(shape)))
        h = st["handle"] = AccumulatorHandle(a["container"], name, ctx.resources, acc)
        return h
    return run


def _fmt(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape)


def _check_dtype(ctx, acc: AccumulatorBase) -> None:
    if ctx.attrs["dtype"] != acc.dtype:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Accumulator '%s' holds %s gradients but the op uses %s"
            % (acc.name, acc.dtype.name, ctx.attrs["dtype"].name))


def _dense_apply(ctx, handle, local_step, gradient):
    acc = lookup_accumulator(ctx, handle, sparse=False)
    _check_dtype(ctx, acc)
    acc.apply(int(local_step), np.asarray(gradient), ctx.attrs.get("_replica_id", -1))


def _take_kernel(sparse: bool):
    def take(ctx, state, done, handle, num_required):
        acc = lookup_accumulator(ctx, handle, sparse=sparse)
        _check_dtype(ctx, acc)
        acc.take_async(state, done, int(num_required))
    return take


def _num_accumulated(ctx, handle):
    return np.array(lookup_accumulator(ctx, handle).num_accumulated(), np.int32)


def _set_global_step(ctx, handle, new_global_step):
    lookup_accumulator(ctx, handle).set_global_step(int(new_global_step))


for _make, _apply, _take, _num, _set in _DENSE.values():
    kernel(_make)(_handle_kernel(DenseAccumulator))
    kernel(_apply)(_dense_apply)
    kernel(_take, is_async=True)(_take_kernel(sparse=False))
    kernel(_num)(_num_accumulated)
    kernel(_set)(_set_global_step)

kernel("SparseConditionalAccumulator")(_handle_kernel(SparseAccumulator))
kernel("SparseAccumulatorTakeGradient", is_async=True)(_take_kernel(sparse=True))


@kernel("SparseAccumulatorApplyGradient")
def _sparse_apply(ctx, handle, local_step, indices, values, shape):
    acc = lookup_accumulator(ctx, handle, sparse=True)
    _check_dtype(ctx, acc)
    indices = np.asarray(indices, np.int64).reshape(-1)
    shape = np.asarray(shape, np.int64).reshape(-1) if ctx.attrs["has_known_shape"] \
        else None
    acc.apply(int(local_step), (indices, np.asarray(values), shape),
              ctx.attrs.get("_replica_id", -1))


@kernel("AccumulatorReplicaStatus")
def _replica_status(ctx, handle):
    step, count, ids, secs, a_steps, a_ids, a_secs = lookup_accumulator(ctx, handle).status()
    return (np.array(step, np.int64), np.array(count, np.int32), np.array(ids, np.int32),
            np.array(secs, np.float64), a_steps, a_ids, a_secs)


# --- the TF1 classes ----------------------------------------------------------------------
def _local_step_tensor(local_step) -> Tensor:
    from tensorweave.ops.math.math_ops import cast
    return cast(convert_to_tensor(local_step), _dt.int64)


@tf_export("ConditionalAccumulatorBase")
class ConditionalAccumulatorBase:
    """A conditional accumulator for aggregating gradients.

    Up-to-date gradients (their `local_step` is at least the accumulator's global step)
    are averaged (or summed) until `take_grad` is called; stale ones are dropped.
    """

    def __init__(self, dtype, shape, accumulator_ref):
        """Creates a new ConditionalAccumulatorBase.

        Args:
          dtype: Datatype of the accumulated gradients.
          shape: Shape of the accumulated gradients.
          accumulator_ref: A handle to the conditional accumulator, created by subclasses.
        """
        self._dtype = dtype
        self._shape = as_shape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name
        self._resource = accumulator_ref.op.type == "ResourceConditionalAccumulator"

    @property
    def accumulator_ref(self) -> Tensor:
        """The underlying accumulator reference."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        """The name of the underlying accumulator."""
        return self._name

    @property
    def dtype(self) -> _dt.DType:
        """The datatype of the gradients accumulated by this accumulator."""
        return self._dtype

    def _op_type(self, i: int) -> str:
        return _DENSE["resource" if self._resource else "ref"][i]

    def num_accumulated(self, name: Optional[str] = None) -> Tensor:
        """Number of gradients that have currently been aggregated in accumulator.

        Args:
          name: Optional name for the operation.

        Returns:
          Number of accumulated gradients currently in accumulator (an int32 scalar).
        """
        if name is None:
            name = "%s_NumAccumulated" % self._name
        return apply_op(self._op_type(3), [self._accumulator_ref], name=name).outputs[0]

    def set_global_step(self, new_global_step, name: Optional[str] = None):
        """Sets the global time step of the accumulator.

        The operation logs a warning if we attempt to set to a time step that is lower
        than the accumulator's own time step.

        Args:
          new_global_step: Value of new time step. Can be a variable or a constant.
          name: Optional name for the operation.

        Returns:
          Operation that sets the accumulator's time step.
        """
        return apply_op(self._op_type(4),
                        [self._accumulator_ref, _local_step_tensor(new_global_step)],
                        name=name or self._op_type(4))

    def replica_status(self, name: Optional[str] = None):
        """tensorweave extension: (global_step, num_accumulated, contributors, step_secs,
        arrival_steps, arrival_replicas, arrival_secs) of the accumulator: the ids of the
        replicas whose gradients are in the current sum, seconds since the current step
        began, and a log of recent gradient arrivals (stale ones included) with the
        seconds after the start of their step. Gradients carry replica ids when applied
        with `replica_id`."""
        return apply_op("AccumulatorReplicaStatus", [self._accumulator_ref],
                        name=name or "%s_ReplicaStatus" % self._name).outputs


def _make_handle(op_type, dtype, shape, shared_name, name, reduction_type) -> Tensor:
    if reduction_type not in _REDUCTIONS:
        raise ValueError("Attr 'reduction_type' of '%s' Op passed string '%s' not in: "
                         "\"MEAN\", \"SUM\"." % (op_type, reduction_type))
    attrs = {"dtype": _dt.as_dtype(dtype),
             "shape": as_shape(shape) if shape is not None else unknown_shape(),
             "shared_name": shared_name or "", "reduction_type": reduction_type}
    return apply_op(op_type, [], attrs, name=name).outputs[0]


def _with_replica(op, replica_id: Optional[int]):
    if replica_id is not None:
        op._set_attr("_replica_id", int(replica_id))
    return op


@tf_export("ConditionalAccumulator")
class ConditionalAccumulator(ConditionalAccumulatorBase):
    """A conditional accumulator for aggregating dense gradients.

    Up-to-date gradients (i.e., time step at which gradient was computed is equal to
    the accumulator's time step) are added to the accumulator. Extraction of the
    average gradient is blocked until the required number of gradients has been
    accumulated.
    """

    def __init__(self, dtype, shape=None, shared_name: Optional[str] = None,
                 name: str = "conditional_accumulator", reduction_type: str = "MEAN"):
        """Creates a new ConditionalAccumulator.

        Args:
          dtype: Datatype of the accumulated gradients.
          shape: Shape of the accumulated gradients.
          shared_name: Optional. If non-empty, this accumulator will be shared under the
            given name across multiple sessions.
          name: Optional name for the accumulator.
          reduction_type: Reduction type to use when taking the gradient: "MEAN" or "SUM".

        Raises:
          ValueError: `reduction_type` is neither "MEAN" nor "SUM".
          TypeError: `dtype` is not a numeric type.
        """
        ref = _make_handle("ResourceConditionalAccumulator", dtype, shape, shared_name,
                           name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name: Optional[str] = None,
                   replica_id: Optional[int] = None):
        """Attempts to apply a gradient to the accumulator.

        The attempt is silently dropped if the gradient is stale, i.e., local_step is less
        than the accumulator's global time step.

        Args:
          grad: The gradient tensor to be applied.
          local_step: Time step at which the gradient was computed.
          name: Optional name for the operation.
          replica_id: tensorweave extension: the index of the replica applying the
            gradient (for `replica_status`); None: unknown.

        Returns:
          The operation that (conditionally) applies a gradient to the accumulator.

        Raises:
          ValueError: If grad is of the wrong shape
        """
        grad = convert_to_tensor(grad, self._dtype)
        grad.get_shape().assert_is_compatible_with(self._shape)
        op = apply_op(self._op_type(1),
                      [self._accumulator_ref, _local_step_tensor(local_step), grad],
                      {"dtype": self._dtype}, name=name or self._op_type(1))
        return _with_replica(op, replica_id)

    def take_grad(self, num_required, name: Optional[str] = None) -> Tensor:
        """Attempts to extract the average gradient from the accumulator.

        The operation blocks until sufficient number of gradients have been successfully
        applied to the accumulator. Once successful, the following actions are also
        triggered: the counter of accumulated gradients is reset to 0, the aggregated
        gradient is reset to 0 tensor, and the accumulator's internal time step is
        incremented by 1.

        Args:
          num_required: Number of gradients that needs to have been aggregated
          name: Optional name for the operation

        Returns:
          A tensor holding the value of the average gradient.

        Raises:
          InvalidArgumentError: If num_required < 1
        """
        out = apply_op(self._op_type(2), [self._accumulator_ref, num_required],
                       {"dtype": self._dtype}, name=name or self._op_type(2)).outputs[0]
        out.set_shape(self._shape)
        return out


@tf_export("SparseConditionalAccumulator", "sparse.SparseConditionalAccumulator")
class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """A conditional accumulator for aggregating sparse gradients (IndexedSlices).

    Sparse gradients are represented by IndexedSlices. Up-to-date gradients are
    aggregated; each index's rows are averaged over the gradients that had that index.
    Extraction of the average gradient is blocked until the required number of
    gradients has been accumulated.
    """

    def __init__(self, dtype, shape=None, shared_name: Optional[str] = None,
                 name: str = "sparse_conditional_accumulator",
                 reduction_type: str = "MEAN"):
        """Creates a new SparseConditionalAccumulator.

        Args:
          dtype: Datatype of the accumulated gradients.
          shape: Shape of the accumulated gradients.
          shared_name: Optional. If non-empty, this accumulator will be shared under the
            given name across multiple sessions.
          name: Optional name for the accumulator.
          reduction_type: Reduction type to use when taking the gradient: "MEAN" or "SUM".
        """
        ref = _make_handle("SparseConditionalAccumulator", dtype, shape, shared_name, name,
                           reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name: Optional[str] = None,
                                  replica_id: Optional[int] = None):
        """Attempts to apply a gradient (an IndexedSlices) to the accumulator.

        Args:
          grad: The gradient IndexedSlices to be applied.
          local_step: Time step at which the gradient was computed.
          name: Optional name for the operation.
          replica_id: tensorweave extension, as in `ConditionalAccumulator.apply_grad`.

        Returns:
          The operation that (conditionally) applies a gradient to the accumulator.
        """
        return self.apply_grad(grad_indices=grad.indices, grad_values=grad.values,
                               grad_shape=grad.dense_shape, local_step=local_step,
                               name=name, replica_id=replica_id)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0,
                   name: Optional[str] = None, replica_id: Optional[int] = None):
        """Attempts to apply a sparse gradient to the accumulator.

        The attempt is silently dropped if the gradient is stale, i.e., local_step is less
        than the accumulator's global time step.

        Args:
          grad_indices: Indices of the sparse gradient to be applied.
          grad_values: Values of the sparse gradient to be applied.
          grad_shape: Shape of the sparse gradient to be applied.
          local_step: Time step at which the gradient was computed.
          name: Optional name for the operation.
          replica_id: tensorweave extension, as in `ConditionalAccumulator.apply_grad`.

        Returns:
          The operation that (conditionally) applies a gradient to the accumulator.

        Raises:
          InvalidArgumentError: If grad is of the wrong shape (at run time).
        """
        from tensorweave.ops.math.math_ops import cast
        values = convert_to_tensor(grad_values, self._dtype)
        indices = cast(convert_to_tensor(grad_indices), _dt.int64)
        known = grad_shape is not None
        shape = cast(convert_to_tensor(grad_shape if known else []), _dt.int64)
        op = apply_op("SparseAccumulatorApplyGradient",
                      [self._accumulator_ref, _local_step_tensor(local_step), indices,
                       values, shape], {"dtype": self._dtype, "has_known_shape": known},
                      name=name or "SparseAccumulatorApplyGradient")
        return _with_replica(op, replica_id)

    def take_grad(self, num_required, name: Optional[str] = None):
        """Attempts to extract the average gradient from the accumulator.

        Blocks until `num_required` gradients have been applied; then resets the
        accumulator and increments its time step by 1.

        Args:
          num_required: Number of gradients that needs to have been aggregated
          name: Optional name for the operation

        Returns:
          A tuple of indices, values, and shape representing the average gradient.

        Raises:
          InvalidArgumentError: If `num_required` < 1
        """
        op = apply_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, num_required],
                      {"dtype": self._dtype}, name=name or "SparseAccumulatorTakeGradient")
        return _SparseTakeGradient(*op.outputs)

    def take_indexed_slices_grad(self, num_required, name: Optional[str] = None):
        """Attempts to extract the average gradient from the accumulator.

        Args:
          num_required: Number of gradients that needs to have been aggregated
          name: Optional name for the operation

        Returns:
          An IndexedSlices holding the value of the average gradient.

        Raises:
          InvalidArgumentError: If `num_required` < 1
        """
        got = self.take_grad(num_required, name=name)
        return IndexedSlices(indices=got.indices, values=got.values,
                             dense_shape=got.shape)


def _sparse_take_type():
    import collections
    return collections.namedtuple("SparseAccumulatorTakeGradient",
                                  ["indices", "values", "shape"])


_SparseTakeGradient = _sparse_take_type()
