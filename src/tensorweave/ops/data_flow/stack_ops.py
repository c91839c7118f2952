"""Stacks: StackV2, StackPushV2, StackPopV2, StackCloseV2 (EuroSys 2018 §5.1, §5.3).

The gradient of a while_loop saves forward intermediates on stacks: the forward loop
pushes one value per iteration, the backward loop pops them in reverse order. Each run
of a StackV2 op creates a new `StackResource` and outputs it as the handle value, so
concurrent steps never share a stack. All stack methods hold the stack's lock (loop
iterations may run concurrently).

Memory (EuroSys §5.3): a stack made on a device charges the elements it holds to that
device's allocator. A push with `swap_memory=True` moves its element to host memory
(`Device.swap_out`, charged to the device's `host_allocator` instead), and every pop
prefetches the element the next pop will take back to the device (`Device.swap_in`), so
a backward loop finds its values on the device while at most one swapped element is
there ahead of its pop; only a first pop can find its element still on the host
(`sync_swap_ins`). `bytes_held`/`peak_bytes` count the elements held, `swapped_bytes`
those on the host now. On a CPU device both memories are one: the value stays where it
is and only the accounting moves. Memory is released as the backward loop pops, and
whatever a step leaves on a stack when the stack is dropped.

On a device whose allocator tracks values itself (`Allocator.tracking`: every simulated
accelerator, and a device with a memory limit) the elements on the device are charged by
`track` for as long as their arrays live, never also explicitly: a pushed kernel output
is already tracked, and an element prefetched back from the host is tracked when it
arrives (its ResourceExhaustedError names the pop). Host copies are charged explicitly
to `host_allocator` either way, and swaps go through the device's copy path
(`SimDevice.swap_out`/`swap_in`: real copies, counted in its `copy_stats`).

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

class StackResource:
    """The run-time state of one stack.

    Invariants (guarded by `lock`): `elements` holds [value, nbytes, on_host] entries,
    last pushed last; `bytes_held` is the sum of their nbytes, `swapped_bytes` the sum
    over entries on the host; `peak_bytes` the maximum `bytes_held` seen; with a
    `device`, entries on the host are charged to its host allocator and the others to
    its allocator; `max_size < 0` means unbounded.
    """

    def __init__(self, name: str, elem_type: _dt.DType, max_size: int, device=None):
        self.lock = threading.Lock()
        self.name = name
        self.elem_type = elem_type
        self.max_size = max_size
        self.device = device
        # the device allocator charges arrays while they live: no explicit accounting
        self._tracked = device is not None and device.allocator.tracking
        # the allocator a push charges and a pop credits explicitly (None: no device, or
        # one that tracks its arrays itself)
        self._charged = None if device is None or self._tracked else device.allocator
        self.elements: List[list] = []
        self.closed = False
        self.bytes_held = 0
        self.peak_bytes = 0
        self.swapped_bytes = 0
        self.prefetches = 0      # swapped elements brought back ahead of their pop
        self.sync_swap_ins = 0   # swapped elements a pop had to bring back itself

    def __repr__(self):
        return "<StackResource %s size=%d>" % (self.name, len(self.elements))

    def __del__(self):
        self._release(self.elements)

    def _raise_closed(self, op) -> None:
        raise errors.InvalidArgumentError(
            None, op, "Stack[%s] has already been closed." % self.name)

    # push and pop run once per loop iteration per saved value: acquire/release under
    # try/finally cost about half a with block
    def push(self, op, value: np.ndarray, swap: bool) -> None:
        nbytes = value.nbytes if type(value) is np.ndarray else \
            int(getattr(value, "nbytes", 0))
        lock = self.lock
        lock.acquire()
        try:
            elements = self.elements
            if self.closed or 0 <= self.max_size <= len(elements):
                self._refuse_push(op)
            if swap:
                value = self._swap_out(value, nbytes)
            elif self._charged is not None:
                self._charged.allocate(nbytes)
            elif self._tracked:
                self.device.allocator.track(value, op)
            elements.append([value, nbytes, swap])
            held = self.bytes_held + nbytes
            self.bytes_held = held
            if held > self.peak_bytes:
                self.peak_bytes = held
        finally:
            lock.release()

    def _refuse_push(self, op) -> None:
        if self.closed:
            self._raise_closed(op)
        raise errors.InvalidArgumentError(
            None, op, "Stack[%s] overflowed its max_size (%d)" % (self.name, self.max_size))

    def _swap_out(self, value, nbytes: int):
        """`value` as kept on the host, charged there (lock held)."""
        dev = self.device
        if dev is not None:
            value = dev.swap_out(value)
            dev.host_allocator.allocate(nbytes)
        self.swapped_bytes += nbytes
        return value

    def pop(self, op) -> np.ndarray:
        lock = self.lock
        lock.acquire()
        try:
            elements = self.elements
            if self.closed or not elements:
                self._refuse_pop(op)
            value, nbytes, on_host = elements.pop()
            self.bytes_held -= nbytes
            if on_host:
                value = self._swap_in(value, nbytes, op)
            elif self._charged is not None:
                self._charged.deallocate(nbytes)
            if elements and elements[-1][2]:
                self._prefetch(elements[-1], op)
        finally:
            lock.release()
        return value

    def _refuse_pop(self, op) -> None:
        if self.closed:
            self._raise_closed(op)
        raise errors.InvalidArgumentError(
            None, op, "Stack[%s] is empty when calling Pop()." % self.name)

    def _swap_in(self, value, nbytes: int, op):
        """A popped element still on the host, brought back by its pop (lock held)."""
        self.sync_swap_ins += 1
        self.swapped_bytes -= nbytes
        dev = self.device
        if dev is not None:
            value = dev.swap_in(value)
            dev.host_allocator.deallocate(nbytes)
            if self._tracked:
                dev.allocator.track(value, op)
        return value

    def _prefetch(self, entry: list, op=None) -> None:
        """Moves the element the next pop takes back to the device (lock held)."""
        entry[2] = False
        self.prefetches += 1
        self.swapped_bytes -= entry[1]
        dev = self.device
        if dev is not None:
            entry[0] = dev.swap_in(entry[0])
            dev.host_allocator.deallocate(entry[1])
            if self._tracked:
                dev.allocator.track(entry[0], op)
            else:
                dev.allocator.allocate(entry[1])

    def size(self) -> int:
        with self.lock:
            return len(self.elements)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            held, self.elements = self.elements, []
            self.bytes_held = self.swapped_bytes = 0
        self._release(held)

    def _release(self, entries) -> None:
        dev = self.device
        if dev is None:
            return
        for _, nbytes, on_host in entries:
            if on_host:
                dev.host_allocator.deallocate(nbytes)
            elif not self._tracked:  # tracked arrays are released when they die
                dev.allocator.deallocate(nbytes)


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
    m = max_size if hasattr(max_size, "ndim") else np.asarray(max_size)
    if m.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "max_size must be a scalar")
    base = ctx.attrs["stack_name"] or ctx.op.name
    return StackResource("%s_%d" % (base, next(_NAMES)), ctx.attrs["elem_type"], int(m),
                         ctx.device)


@kernel("StackPushV2")
def _push_kernel(ctx, handle, elem):
    stack = handle if type(handle) is StackResource else _lookup_stack(ctx.op, handle)
    attrs = ctx.attrs
    if attrs["T"] is not stack.elem_type:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must have type %s but got %s"
            % (_dt.type_string(stack.elem_type), _dt.type_string(attrs["T"])))
    stack.push(ctx.op, elem, attrs["swap_memory"])
    return elem


@kernel("StackPopV2")
def _pop_kernel(ctx, handle):
    stack = handle if type(handle) is StackResource else _lookup_stack(ctx.op, handle)
    if ctx.attrs["elem_type"] is not stack.elem_type:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Output 0 of type %s does not match declared output type %s"
            % (_dt.type_string(stack.elem_type), _dt.type_string(ctx.attrs["elem_type"])))
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
      swap_memory: move the element to host memory until a pop prefetches it back.
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
