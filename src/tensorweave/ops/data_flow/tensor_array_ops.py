"""TensorArray: a list of tensors threaded through the graph by a flow value (EuroSys 2018
§5.2, TF1 `tf.TensorArray`).

Run-time model. Each run of a `TensorArrayV3` op creates a new `TensorArrayResource` and
outputs it as the value of its `handle` tensor, with `flow = 0.0`. Every other TensorArray
op takes that object as its handle input and a float32 `flow` input; ops that change the
array output a new flow. The flow carries no data: it orders reads after writes in the
dataflow graph, including across the loop iterations of a while_loop (which carries only
the flow of a TensorArray loop variable).

Gradient arrays (`TensorArrayGradV3`, one per forward array and gradient source string)
aggregate multiple writes to one index by summing, and a read of an index nobody wrote
returns zeros of the element shape when that shape is fully known (TF1
`multiple_writes_aggregate`).

Kernels are thread-safe: every resource method holds the resource's lock, because the
executor may run several loop iterations at once.
"""
from __future__ import annotations

import itertools
import threading
from typing import Dict, List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.data_flow.element_shapes import compatible, dims_str, fully_defined
from tensorweave.runtime.values import element

__all__ = ["TensorArrayResource", "lookup_tensor_array"]

_NAMES = itertools.count()  # the suffix making each run-time array's name unique

# per-element states
_UNWRITTEN, _WRITTEN, _READ, _CLEARED = 0, 1, 2, 3
_HOLDING_VALUES = frozenset((_WRITTEN, _READ))

def _dims_of(shape: TensorShape) -> Optional[Tuple[Optional[int], ...]]:
    """A TensorShape as a tuple of ints/None, or None for unknown rank."""
    return None if shape.ndims is None else tuple(shape.as_list())


def _merge_dims(a, b):
    """Merges two partial shapes (tuples or None); None where they are incompatible."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        return None
    return tuple(x if x is not None else y for x, y in zip(a, b))


class TensorArrayResource:
    """The run-time state of one TensorArray.

    Invariants (all fields are guarded by `lock`):
      * `values[i]` is the array written at index i, or None unless `states[i]` is
        _WRITTEN or _READ (a cleared element has dropped its value).
      * `len(values) == len(states) == size`; only a `dynamic_size` array grows.
      * `element_shape` is a tuple of ints/None or None (unknown rank); with
        `identical_element_shapes` the first write fixes it to the written shape.
      * `grads` maps a gradient source string to this array's gradient array, created
        once (TensorArrayGradV3 is idempotent per source).
      * `shapes[i]` is the shape of the element last written at index i (kept when it is
        read, cleared or closed), or None if none was; a gradient array starts with the
        shapes of its forward array (TF's CopyShapesFrom), so an element the gradient
        never writes reads as zeros of the forward element's shape.
    """

    def __init__(self, name: str, dtype: _dt.DType, size: int, dynamic_size: bool,
                 clear_after_read: bool, element_shape, identical_element_shapes: bool,
                 multiple_writes_aggregate: bool = False):
        self.lock = threading.Lock()
        self.name = name
        self.dtype = dtype
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape
        self.identical_element_shapes = identical_element_shapes
        self.multiple_writes_aggregate = multiple_writes_aggregate
        self.values: List[Optional[np.ndarray]] = [None] * size
        self.states: List[int] = [_UNWRITTEN] * size
        self.shapes: List[Optional[tuple]] = [None] * size
        self.closed = False
        self.grads: Dict[str, "TensorArrayResource"] = {}

    def __repr__(self):
        return "<TensorArrayResource %s size=%d dtype=%s>" % (self.name, len(self.values),
                                                            self.dtype.name)

    # --- helpers (lock held) ---------------------------------------------------------
    def _fail(self, op, message: str, prefix: bool = True):
        text = ("TensorArray %s: %s" % (self.name, message)) if prefix else message
        raise errors.InvalidArgumentError(None, op, text)

    def _check_open(self, op) -> None:
        if self.closed:
            raise errors.InvalidArgumentError(
                None, op, "TensorArray %s has already been closed." % self.name)

    def _grow(self, n: int) -> None:
        extra = n - len(self.values)
        if extra > 0:
            self.values.extend([None] * extra)
            self.states.extend([_UNWRITTEN] * extra)
            self.shapes.extend([None] * extra)

    def _write_locked(self, op, index: int, value: np.ndarray) -> None:
        size = len(self.values)
        if index < 0 or (index >= size and not self.dynamic_size):
            self._fail(op, "Tried to write to index %d but array is not resizeable and size "
                       "is: %d" % (index, size))
        if index >= size:
            self._grow(index + 1)
        if not compatible(self.element_shape, value.shape):
            self._fail(op, "Could not write to TensorArray index %d because the value shape "
                       "is %s which is incompatible with the TensorArray's inferred element "
                       "shape: %s (consider setting infer_shape=False)."
                       % (index, dims_str(value.shape), dims_str(self.element_shape)))
        if self.identical_element_shapes:
            self.element_shape = tuple(value.shape)
        state = self.states[index]
        if state in (_READ, _CLEARED):
            self._fail(op, "Could not write to TensorArray index %d because it has already "
                       "been read." % index)
        if state == _WRITTEN:
            if not self.multiple_writes_aggregate:
                self._fail(op, "Could not write to TensorArray index %d because it has "
                           "already been written to." % index)
            old = self.values[index]
            if old.shape != value.shape:
                self._fail(op, "Could not aggregate to TensorArray index %d because the "
                           "existing shape is %s but the new input shape is %s."
                           % (index, dims_str(old.shape), dims_str(value.shape)))
            value = old + value  # a new array: neither input is mutated
        elif self.multiple_writes_aggregate and self.shapes[index] is not None and \
                self.shapes[index] != tuple(value.shape):
            # a gradient array checks against its forward element's shape
            self._fail(op, "Could not aggregate to TensorArray index %d because the "
                       "existing shape is %s but the new input shape is %s."
                       % (index, dims_str(self.shapes[index]), dims_str(value.shape)))
        self.values[index] = value
        self.states[index] = _WRITTEN
        self.shapes[index] = tuple(value.shape)

    def _read_locked(self, op, index: int) -> np.ndarray:
        size = len(self.values)
        if index < 0 or index >= size:
            self._fail(op, "Tried to read from index %d but array size is: %d"
                       % (index, size), prefix=False)
        state = self.states[index]
        if state == _CLEARED:
            self._fail(op, "Could not read index %d twice because it was cleared after a "
                       "previous read (perhaps try setting clear_after_read = false?)."
                       % index)
        if state == _UNWRITTEN and self.shapes[index] is not None:
            # a gradient array's element its forward array had: zeros of that shape
            return np.zeros(self.shapes[index], dtype=self.dtype.as_numpy_dtype)
        if state == _UNWRITTEN:
            # TF 2.21 (checked): an unwritten element of known shape reads as zeros
            if not self.multiple_writes_aggregate and not fully_defined(self.element_shape):
                self._fail(op, "Could not read from TensorArray index %d because it has not "
                           "yet been written to." % index)
            if not fully_defined(self.element_shape):
                self._fail(op, "Could not read from TensorArray index %d.  Furthermore, the "
                           "element shape is not fully defined: %s.  It is possible you are "
                           "working with a resizeable TensorArray and stop_gradients is not "
                           "allowing the gradients to be written.  If you set the full "
                           "element_shape property on the forward TensorArray, the proper "
                           "all-zeros tensor will be returned instead of incurring this "
                           "error." % (index, dims_str(self.element_shape)))
            return np.zeros(self.element_shape, dtype=self.dtype.as_numpy_dtype)
        value = self.values[index]
        if self.clear_after_read:
            self.values[index] = None
            self.states[index] = _CLEARED
        else:
            self.states[index] = _READ
        return value

    # --- the operations kernels call -------------------------------------------------
    def write(self, op, index: int, value: np.ndarray) -> None:
        with self.lock:
            self._check_open(op)
            self._write_locked(op, index, value)

    def write_many(self, op, indices: List[int], values, shape: Optional[tuple] = None
                   ) -> None:
        """Writes values[k] at indices[k], in order; `shape`: every value's shape, where
        the caller knows it is one (the rows of one array)."""
        with self.lock:
            self._check_open(op)
            if shape is not None and self._write_rows(indices, values, shape):
                return
            for i, v in zip(indices, values):
                self._write_locked(op, int(i), v)

    def _write_rows(self, indices: List[int], values, shape: tuple) -> bool:
        """Writes values of one shape at distinct unwritten indices within the size at
        once (TensorArrayScatter's usual case, unstack: 128 rows 60 -> 15 us), checked
        as `_write_locked` checks each; False, with nothing written, where a write would
        need its other cases (growth, a repeat, aggregation, a failure)."""
        size, states = len(self.values), self.states
        if not indices or self.multiple_writes_aggregate or min(indices) < 0 or \
                max(indices) >= size or not compatible(self.element_shape, shape) or \
                len(set(indices)) != len(indices) or \
                set(map(states.__getitem__, indices)) != {_UNWRITTEN}:
            return False
        shape = tuple(shape)
        if self.identical_element_shapes:
            self.element_shape = shape
        stored, shapes = self.values, self.shapes
        for i, v in zip(indices, values):
            stored[i] = v
            states[i] = _WRITTEN
            shapes[i] = shape
        return True

    def read(self, op, index: int) -> np.ndarray:
        with self.lock:
            self._check_open(op)
            return self._read_locked(op, index)

    def read_many(self, op, indices: List[int]) -> List[np.ndarray]:
        with self.lock:
            self._check_open(op)
            size, states = len(self.values), self.states
            # distinct written indices within the size (a gather's or stack's usual
            # case) read at once, as `_read_locked` reads each
            if indices and min(indices) >= 0 and max(indices) < size and \
                    set(map(states.__getitem__, indices)) <= _HOLDING_VALUES and \
                    (not self.clear_after_read or len(set(indices)) == len(indices)):
                stored = self.values
                out = [stored[i] for i in indices]
                if self.clear_after_read:
                    for i in indices:
                        stored[i] = None
                        states[i] = _CLEARED
                else:
                    for i in indices:
                        states[i] = _READ
                return out
            return [self._read_locked(op, int(i)) for i in indices]

    def size(self) -> int:
        with self.lock:
            return len(self.values)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.values = [None] * len(self.values)

    def grad(self, op, source: str) -> "TensorArrayResource":
        with self.lock:
            self._check_open(op)
            g = self.grads.get(source)
            if g is None:
                g = TensorArrayResource("%s@%s" % (self.name, source), self.dtype,
                                        len(self.values), False, True, self.element_shape,
                                        self.identical_element_shapes,
                                        multiple_writes_aggregate=True)
                g.shapes = list(self.shapes)  # TF's CopyShapesFrom
                self.grads[source] = g
            return g


def lookup_tensor_array(op, handle) -> TensorArrayResource:
    """The TensorArrayResource a handle value names.

    Raises:
      InvalidArgumentError: `handle` is not a TensorArray handle.
    """
    if type(handle) is TensorArrayResource:
        return handle
    raise errors.InvalidArgumentError(None, op, "Expected a TensorArray handle, got %r"
                                      % (handle,))


def _scalar_int(op, t, what: str) -> int:
    if type(t) is np.ndarray and t.ndim == 0:  # the common case, checked first
        return int(t)
    a = t if hasattr(t, "ndim") else np.asarray(t)  # a host or GPU array, or a scalar
    if a.ndim != 0:
        raise errors.InvalidArgumentError(None, op, "%s must be a scalar, got shape %s"
                                          % (what, dims_str(a.shape)))
    return int(a)


_FLOW = np.float32(0.0)


# --- shape functions --------------------------------------------------------------------
def _scalar_input(op, i: int, what: str) -> None:
    s = op.inputs[i].shape
    if s.ndims is not None and s.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d (%s)" % (s.ndims, what))


def _vector_input(op, i: int) -> None:
    s = op.inputs[i].shape
    if s.ndims is not None and s.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d" % s.ndims)


def _handle_and_flow_shape(op):
    return [TensorShape([2]), TensorShape([])]


def _tensor_array_shape(op):
    _scalar_input(op, 0, "size")
    return _handle_and_flow_shape(op)


def _flow_shape(op):
    return TensorShape([])


def _gather_shape(op):
    _vector_input(op, 1)
    declared = _declared_element_shape(op.inputs[0])
    es = op._get_attr("element_shape") if declared is None else declared
    if es.ndims is None:
        return unknown_shape()
    # one element per index (TF): the number of indices leads
    return op.inputs[1].shape.with_rank(1).concatenate(es)


def _declared_element_shape(handle: Tensor) -> Optional[TensorShape]:
    """The element shape the TensorArrayV3 op creating `handle` was given, or None
    when the handle does not come from one. As TF's handle data, it follows the
    handle through loop and cond plumbing; the shape inferred from writes is not it."""
    op = handle.op
    while op.type in ("Enter", "Identity", "Switch", "Merge", "NextIteration", "Exit") \
            and op.inputs:
        op = op.inputs[0].op
    return op._get_attr("element_shape") if op.type == "TensorArrayV3" else None


def _scatter_shape(op):
    _vector_input(op, 1)
    return TensorShape([])


def _split_shape(op):
    _vector_input(op, 2)
    return TensorShape([])


def _concat_shape(op):
    es = op._get_attr("element_shape_except0")
    value = unknown_shape() if es.ndims is None else TensorShape([None]).concatenate(es)
    return [value, TensorShape([None])]


_ELEM = TensorShape(None)

register_op("TensorArrayV3", inputs=["size: int32"],
            outputs=["handle: resource", "flow: float32"],
            attrs={"dtype": TypeAttr(), "element_shape": _ELEM, "dynamic_size": False,
                   "clear_after_read": True, "identical_element_shapes": False,
                   "tensor_array_name": ""},
            shape=_tensor_array_shape, stateful=True)
register_op("TensorArrayGradV3", inputs=["handle: resource", "flow_in: float32"],
            outputs=["grad_handle: resource", "flow_out: float32"],
            attrs={"source": REQUIRED}, shape=_handle_and_flow_shape, stateful=True)
register_op("TensorArrayWriteV3",
            inputs=["handle: resource", "index: int32", "value: T", "flow_in: float32"],
            outputs=["flow_out: float32"], attrs={"T": TypeAttr()}, shape=_flow_shape,
            stateful=True)
register_op("TensorArrayReadV3", inputs=["handle: resource", "index: int32",
                                         "flow_in: float32"],
            outputs=["value: dtype"], attrs={"dtype": TypeAttr()},
            shape=lambda op: unknown_shape(), stateful=True)
register_op("TensorArrayGatherV3", inputs=["handle: resource", "indices: int32",
                                           "flow_in: float32"],
            outputs=["value: dtype"], attrs={"dtype": TypeAttr(), "element_shape": _ELEM},
            shape=_gather_shape, stateful=True)
register_op("TensorArrayScatterV3",
            inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float32"],
            outputs=["flow_out: float32"], attrs={"T": TypeAttr()}, shape=_scatter_shape,
            stateful=True)
register_op("TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float32"],
            outputs=["value: dtype", "lengths: int64"],
            attrs={"dtype": TypeAttr(), "element_shape_except0": _ELEM},
            shape=_concat_shape, stateful=True)
register_op("TensorArraySplitV3",
            inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float32"],
            outputs=["flow_out: float32"], attrs={"T": TypeAttr()}, shape=_split_shape,
            stateful=True)
register_op("TensorArraySizeV3", inputs=["handle: resource", "flow_in: float32"],
            outputs=["size: int32"], shape=lambda op: TensorShape([]), stateful=True)
register_op("TensorArrayCloseV3", inputs=["handle: resource"], outputs=[],
            shape=lambda op: [], stateful=True)


# --- kernels ----------------------------------------------------------------------------
@kernel("TensorArrayV3")
def _tensor_array_kernel(ctx, size):
    a = ctx.attrs
    n = _scalar_int(ctx.op, size, "size")
    if n < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Size should be >= 0.")
    # TF's run-time name: the given name, or the creating op's, made unique
    name = "%s_%d" % (a["tensor_array_name"] or ctx.op.name, next(_NAMES))
    ta = TensorArrayResource(name, a["dtype"], n, a["dynamic_size"], a["clear_after_read"],
                             _dims_of(a["element_shape"]), a["identical_element_shapes"])
    return ta, _FLOW


@kernel("TensorArrayGradV3")
def _tensor_array_grad_kernel(ctx, handle, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    return ta.grad(ctx.op, ctx.attrs["source"]), flow


def _check_write_dtype(ctx, ta: TensorArrayResource) -> None:
    t = ctx.attrs["T"]
    if t is not ta.dtype:
        raise errors.InvalidArgumentError(
            None, ctx.op, "TensorArray dtype is %s but Op is trying to write dtype %s."
            % (_dt.type_string(ta.dtype), _dt.type_string(t)))


def _check_read_dtype(ctx, ta: TensorArrayResource) -> None:
    t = ctx.attrs["dtype"]
    if t is not ta.dtype:
        raise errors.InvalidArgumentError(
            None, ctx.op, "TensorArray dtype is %s but Op requested dtype %s."
            % (_dt.type_string(ta.dtype), _dt.type_string(t)))


@kernel("TensorArrayWriteV3")
def _write_kernel(ctx, handle, index, value, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_write_dtype(ctx, ta)
    if type(value) is not np.ndarray or ctx.xp is not np:
        value = ctx.xp.asarray(value)
    ta.write(ctx.op, _scalar_int(ctx.op, index, "index"), value)
    return flow


@kernel("TensorArrayReadV3")
def _read_kernel(ctx, handle, index, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_read_dtype(ctx, ta)
    return ta.read(ctx.op, _scalar_int(ctx.op, index, "index"))


def _stack_elements(ctx, ta: TensorArrayResource, elements, lead_shape) -> np.ndarray:
    if not elements:
        es = _merge_dims(ta.element_shape, _dims_of(ctx.attrs["element_shape"]))
        if not fully_defined(es):
            raise errors.UnimplementedError(
                None, ctx.op, "TensorArray has size zero, but element shape %s is not fully "
                "defined. Currently only static shapes are supported when packing "
                "zero-size TensorArrays." % dims_str(es))
        return np.zeros(tuple(lead_shape) + tuple(es), dtype=ta.dtype.as_numpy_dtype)
    first = elements[0].shape
    shapes = [e.shape for e in elements]
    if shapes.count(first) != len(shapes):
        i = next(k for k, shape in enumerate(shapes) if shape != first)
        raise errors.InvalidArgumentError(
            None, ctx.op, "TensorArray has inconsistent shapes.  Index 0 has shape: %s "
            "but index %d has shape: %s" % (dims_str(first), i, dims_str(shapes[i])))
    if not first or type(elements[0]) is not np.ndarray:
        return np.stack(elements)
    # the same copy as np.stack without its view per element (128 images: 56 -> 32 us)
    return np.concatenate(elements).reshape((len(elements),) + first)


@kernel("TensorArrayGatherV3")
def _gather_kernel(ctx, handle, indices, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_read_dtype(ctx, ta)
    idx = ctx.xp.asarray(indices)
    if idx.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "indices must be a vector, but "
                                          "saw shape: %s" % dims_str(idx.shape))
    return _stack_elements(ctx, ta, ta.read_many(ctx.op, idx.tolist()), (0,))


@kernel("TensorArrayScatterV3")
def _scatter_kernel(ctx, handle, indices, value, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_write_dtype(ctx, ta)
    idx = ctx.xp.asarray(indices)
    value = ctx.xp.asarray(value)
    if idx.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected indices to be a vector, "
                                          "but received shape: %s" % dims_str(idx.shape))
    if value.ndim == 0 or value.shape[0] != idx.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected len(indices) == values.shape[0], but saw: %d vs. %s"
            % (idx.shape[0], value.shape[0] if value.ndim else "a scalar"))
    if idx.size:
        top = int(idx.max())
        size = ta.size()
        if not ta.dynamic_size and top >= size:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Max scatter index must be < array size (%d vs. %d)"
                % (top, size))
    rows = list(value)
    if value.ndim == 1 and value.dtype == object:  # a string vector's rows: bare bytes
        rows = [element(v) for v in rows]
    ta.write_many(ctx.op, idx.tolist(), rows, value.shape[1:])
    return flow


@kernel("TensorArrayConcatV3")
def _concat_kernel(ctx, handle, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_read_dtype(ctx, ta)
    elements = ta.read_many(ctx.op, range(ta.size()))
    if not elements:
        es = ta.element_shape[1:] if ta.element_shape is not None else None
        es = _merge_dims(es, _dims_of(ctx.attrs["element_shape_except0"]))
        if not fully_defined(es):
            raise errors.UnimplementedError(
                None, ctx.op, "TensorArray has size zero, but element_shape_except0 %s is "
                "not fully defined. Currently only static shapes are supported when "
                "concatenating zero-size TensorArrays." % dims_str(es))
        return (np.zeros((0,) + tuple(es), dtype=ta.dtype.as_numpy_dtype),
                np.zeros((0,), np.int64))
    rest = None
    for i, e in enumerate(elements):
        if e.ndim == 0:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Concat saw a scalar shape at index %d but requires at least "
                "vectors.  Did you mean to call stack instead?" % i)
        if rest is None:
            rest = e.shape[1:]
        elif e.shape[1:] != rest:
            raise errors.InvalidArgumentError(
                None, ctx.op, "TensorArray has inconsistent shapes.  Index 0 has (excepting "
                "dimension 0) shape: %s but index %d has (excepting dimension 0) shape: %s"
                % (dims_str(rest), i, dims_str(e.shape[1:])))
    lengths = np.array([e.shape[0] for e in elements], dtype=np.int64)
    return np.concatenate(elements, axis=0), lengths


@kernel("TensorArraySplitV3")
def _split_kernel(ctx, handle, value, lengths, flow):
    ta = lookup_tensor_array(ctx.op, handle)
    _check_write_dtype(ctx, ta)
    value = ctx.xp.asarray(value)
    lengths = ctx.xp.asarray(lengths)
    if value.ndim == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected value to be at least a "
                                          "vector, but received shape: []")
    if lengths.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected lengths to be a vector, "
                                          "received shape: %s" % dims_str(lengths.shape))
    total = int(lengths.sum())
    if np.any(lengths < 0) or total != value.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected sum of lengths to be equal to values.shape[0], but sum "
            "of lengths is %d and value's shape is: %s" % (total, dims_str(value.shape)))
    size = ta.size()
    if not ta.dynamic_size and size != lengths.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "TensorArray's size is not equal to the size of lengths (%d vs. "
            "%d), and the TensorArray is not marked as dynamically resizeable"
            % (size, lengths.shape[0]))
    pieces = np.split(value, np.cumsum(lengths)[:-1].tolist(), axis=0)
    ta.write_many(ctx.op, range(len(pieces)), pieces)
    return flow


@kernel("TensorArraySizeV3")
def _size_kernel(ctx, handle, flow):
    return np.int32(lookup_tensor_array(ctx.op, handle).size())


@kernel("TensorArrayCloseV3")
def _close_kernel(ctx, handle):
    lookup_tensor_array(ctx.op, handle).close()
    return None


for _t in ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3"):
    not_differentiable(_t)
