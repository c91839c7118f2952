"""Stacks: StackV2, StackPushV2, StackPopV2, StackCloseV2 (EuroSys 2018 §5.1, §5.3).

The gradient of a while_loop saves forward intermediates on stacks: the forward loop
pushes one value per iteration, the backward loop pops them in reverse order. Each run
of a StackV2 op creates a new `StackResource` and outputs it as the handle value, so
concurrent steps never share a stack. All stack methods hold the stack's lock (loop
iterations may run concurrently).

Memory accounting (used for swap_memory, EuroSys §5.3): a stack tracks `bytes_held`
(bytes of the elements it holds now) and `peak_bytes`. A push with `swap_memory=True`
marks its element as swapped to host memory: it counts in `swapped_bytes`, and, when the
kernel's device has a `host_allocator` (an Allocator), is allocated there until popped.
The element array itself is kept as is (CPU arrays need no copy).

The builders are internal (TF1 exports no stack API): stack_v2, stack_push_v2,
stack_pop_v2, stack_close_v2.
"""
from __future__ import annotations

import itertools
import threading
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape

__all__ = ["StackResource", "stack_v2", "stack_push_v2", "stack_pop_v2", "stack_close_v2"]

_NAMES = itertools.count(1)

_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _tf_type_name(dtype: _dt.DType) -> str:
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


class StackResource:
    """The run-time state of one stack.

    Invariants (guarded by `lock`): `elements` holds (array, nbytes, host_allocator or
    None) entries, last pushed last; `bytes_held` is the sum of their nbytes;
    `swapped_bytes` the sum over swapped entries still held; `peak_bytes` the maximum
    `bytes_held` seen; `max_size < 0` means unbounded.
    """

    def __init__(self, name: str, elem_type: _dt.DType, max_size: int):
        self.lock = threading.Lock()
        self.name = name
        self.elem_type = elem_type
        self.max_size = max_size
        self.elements: List[tuple] = []
        self.closed = False
        self.bytes_held = 0
        self.peak_bytes = 0
        self.swapped_bytes = 0

    def __repr__(self):
        return "<StackResource %s size=%d>" % (self.name, len(self.elements))

    def _raise_closed(self, op) -> None:
        raise errors.InvalidArgumentError(
            None, op, "Stack[%s] has already been closed." % self.name)

    def push(self, op, value: np.ndarray, swap: bool, host_allocator=None) -> None:
        nbytes = value.nbytes if type(value) is np.ndarray else \
            int(getattr(value, "nbytes", 0))
        alloc = host_allocator if swap else None
        with self.lock:
            if self.closed:
                self._raise_closed(op)
            elements = self.elements
            if 0 <= self.max_size <= len(elements):
                raise errors.InvalidArgumentError(
                    None, op, "Stack[%s] overflowed its max_size (%d)"
                    % (self.name, self.max_size))
            elements.append((value, nbytes, swap, alloc))
            held = self.bytes_held + nbytes
            self.bytes_held = held
            if held > self.peak_bytes:
                self.peak_bytes = held
            if swap:
                self.swapped_bytes += nbytes
        if alloc is not None:
            alloc.allocate(nbytes)

    def pop(self, op) -> np.ndarray:
        with self.lock:
            if self.closed:
                self._raise_closed(op)
            if not self.elements:
                raise errors.InvalidArgumentError(
                    None, op, "Stack[%s] is empty when calling Pop()." % self.name)
            value, nbytes, swapped, alloc = self.elements.pop()
            self.bytes_held -= nbytes
            if swapped:
                self.swapped_bytes -= nbytes
        if alloc is not None:
            alloc.deallocate(nbytes)
        return value

    def size(self) -> int:
        with self.lock:
            return len(self.elements)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            held, self.elements = self.elements, []
            self.bytes_held = self.swapped_bytes = 0
        for _, nbytes, _, alloc in held:
            if alloc is not None:
                alloc.deallocate(nbytes)


def _lookup_stack(op, handle) -> StackResource:
    if type(handle) is StackResource:
        return handle
    raise errors.InvalidArgumentError(None, op, "Expected a stack handle, got %r" % (handle,))


def _max_size_shape(op):
    s = op.inputs[0].shape
    if s.ndims is not None and s.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d" % s.ndims)
    return TensorShape([2])


register_op("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
            attrs={"elem_type": TypeAttr(), "stack_name": ""}, shape=_max_size_shape,
            stateful=True)
register_op("StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "swap_memory": False},
            shape=lambda op: op.inputs[1].shape, stateful=True)
register_op("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
            attrs={"elem_type": TypeAttr()}, shape=lambda op: unknown_shape(),
            stateful=True)
register_op("StackCloseV2", inputs=["handle: resource"], outputs=[],
            shape=lambda op: [], stateful=True)


@kernel("StackV2")
def _stack_kernel(ctx, max_size):
    m = np.asarray(max_size)
    if m.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "max_size must be a scalar")
    base = ctx.attrs["stack_name"] or ctx.op.name
    return StackResource("%s_%d" % (base, next(_NAMES)), ctx.attrs["elem_type"], int(m))


@kernel("StackPushV2")
def _push_kernel(ctx, handle, elem):
    stack = handle if type(handle) is StackResource else _lookup_stack(ctx.op, handle)
    attrs = ctx.attrs
    if attrs["T"] is not stack.elem_type:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must have type %s but got %s"
            % (_tf_type_name(stack.elem_type), _tf_type_name(attrs["T"])))
    if attrs["swap_memory"]:
        stack.push(ctx.op, elem, True, getattr(ctx.device, "host_allocator", None))
    else:
        stack.push(ctx.op, elem, False)
    return elem


@kernel("StackPopV2")
def _pop_kernel(ctx, handle):
    stack = handle if type(handle) is StackResource else _lookup_stack(ctx.op, handle)
    if ctx.attrs["elem_type"] is not stack.elem_type:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Output 0 of type %s does not match declared output type %s"
            % (_tf_type_name(stack.elem_type), _tf_type_name(ctx.attrs["elem_type"])))
    return stack.pop(ctx.op)


@kernel("StackCloseV2")
def _close_kernel(ctx, handle):
    _lookup_stack(ctx.op, handle).close()
    return None


for _t in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"):
    not_differentiable(_t)


# --- builders (internal) --------------------------------------------------------------
def stack_v2(max_size, elem_type, stack_name: str = "", name: Optional[str] = None) -> Tensor:
    """A new stack; returns its handle.

    Args:
      max_size: int32 scalar, the most elements the stack may hold (-1: no limit).
      elem_type: the dtype of the elements.
      stack_name: a name for the stack (in error messages).
      name: a name for the op.

    Returns:
      The resource handle Tensor.
    """
    return apply_op("StackV2", [max_size], {"elem_type": _dt.as_dtype(elem_type),
                                            "stack_name": stack_name},
                    name=name or "StackV2").outputs[0]


def stack_push_v2(handle, elem, swap_memory: bool = False,
                  name: Optional[str] = None) -> Tensor:
    """Pushes `elem` onto the stack; returns `elem`.

    Args:
      handle: the stack handle.
      elem: the Tensor to push.
      swap_memory: account the element as swapped to host memory.
      name: a name for the op.

    Raises:
      InvalidArgumentError (at run time): the stack is full, closed or of another dtype.
    """
    return apply_op("StackPushV2", [handle, elem], {"swap_memory": bool(swap_memory)},
                    name=name or "StackPushV2").outputs[0]


def stack_pop_v2(handle, elem_type, name: Optional[str] = None) -> Tensor:
    """Pops the top element of the stack (static shape unknown).

    Raises:
      InvalidArgumentError (at run time): the stack is empty or closed.
    """
    return apply_op("StackPopV2", [handle], {"elem_type": _dt.as_dtype(elem_type)},
                    name=name or "StackPopV2").outputs[0]


def stack_close_v2(handle, name: Optional[str] = None) -> Operation:
    """Closes the stack, dropping its elements; returns the Operation."""
    return apply_op("StackCloseV2", [handle], name=name or "StackCloseV2")
