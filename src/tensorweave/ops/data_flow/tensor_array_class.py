"""`tf.TensorArray`: the graph-mode Python class over the TensorArray ops.

Imported by tensor_array_ops.py (which declares the ops and kernels).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape


def _as_element_shape(shape) -> TensorShape:
    if shape is None:
        return unknown_shape()
    return shape if isinstance(shape, TensorShape) else as_shape(shape)


@tf_export("TensorArray")
class TensorArray:
    """Class wrapping dynamic-sized, per-time-step, write-once Tensor arrays (TF1
    `tf.TensorArray`).

    A TensorArray is a handle (a resource tensor naming the run-time array) plus a
    `flow` tensor (float32 scalar) that orders the operations on the array. Methods that
    change the array (`write`, `unstack`, `scatter`, `split`) return a NEW TensorArray
    object sharing the handle and the static element-shape inference state, whose flow
    is the op's output: always use the returned object.

    With `infer_shape=True` (the default) the first write, unstack, scatter or split
    fixes the element shape: `read`/`stack`/`gather` get it as their static shape and a
    later write of another shape raises ValueError at graph-build time.

    For while_loop (TensorArrays as loop variables; the loop carries only the flow):
    `ta._with_flow(flow_tensor)` returns a TensorArray sharing this one's handle, dtype,
    size, dynamic_size and element-shape state, with `flow_tensor` as its flow.

    Args:
      dtype: the type of the elements.
      size: (int32 scalar) the initial size; required unless `handle` is given.
      dynamic_size: if True, writes past the end grow the array (default False).
      clear_after_read: if True (default), reading an element frees it, and reading it
        again raises.
      tensor_array_name: the run-time name of the array (in error messages).
      handle: an existing TensorArray handle to wrap (then `flow` is required too).
      flow: the flow tensor to use with `handle`.
      infer_shape: if True, infer and check the element shape from writes (all
        elements must have the same shape).
      element_shape: the shape of each element, if known.
      colocate_with_first_write_call: accepted for compatibility; the array is created
        where the creation op is placed.
      name: a name for the creation op.

    Raises:
      ValueError: both or neither of `handle` and `size` given, or `handle` combined
        with creation arguments.
      TypeError: `handle` is not a Tensor.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and not isinstance(handle, Tensor):
            raise TypeError("Handle must be a Tensor")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both a handle and element_shape at the same "
                             "time")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both a handle and dynamic_size at the same "
                             "time")
        if handle is not None and clear_after_read is not None:
            raise ValueError("Cannot provide both a handle and clear_after_read at the "
                             "same time")
        if clear_after_read is None:
            clear_after_read = True
        self._dtype = _dt.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._size = size
        self._colocate_with_first_write_call = colocate_with_first_write_call
        # shared (by reference) with every TensorArray derived from this one
        self._element_shape = [_as_element_shape(element_shape)]
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        if flow is not None:
            raise ValueError("flow must not be provided if handle is not provided")
        g = _graph._graph_of([size]) if isinstance(size, Tensor) else \
            _graph.get_default_graph()
        with g.name_scope(name or "TensorArray") as scope:
            size_t = convert_to_tensor(size, dtype=_dt.int32, name="size")
            op = apply_op("TensorArrayV3", [size_t], {
                "dtype": self._dtype, "element_shape": self._element_shape[0],
                "dynamic_size": self._dynamic_size, "clear_after_read": clear_after_read,
                "identical_element_shapes": bool(infer_shape),
                "tensor_array_name": tensor_array_name or ""}, name=scope)
        self._handle, self._flow = op.outputs[0], op.outputs[1]

    # --- properties ----------------------------------------------------------------
    @property
    def flow(self) -> Tensor:
        """The flow Tensor forcing ops leading to this TensorArray state."""
        return self._flow

    @property
    def dtype(self) -> _dt.DType:
        """The data type of this TensorArray."""
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The reference to the TensorArray."""
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        """The TensorShape of elements in this TensorArray."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        """Python bool; if True the TensorArray can grow dynamically."""
        return self._dynamic_size

    # --- internal helpers ----------------------------------------------------------
    def _with_flow(self, flow) -> "TensorArray":
        """A TensorArray sharing handle, dtype, size and element-shape state, with `flow`
        as its flow (used by while_loop to rebuild TensorArray loop variables)."""
        ta = TensorArray.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta._flow = flow
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        """Checks `shape` against the inferred element shape and refines it."""
        shape = _as_element_shape(shape)
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError("Inconsistent shapes: saw %s but expected %s "
                             % (shape, self.element_shape))
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value_tensor(self, value) -> Tensor:
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype.base_dtype is not self._dtype:
            raise TypeError("TensorArray dtype is %s but the value %s has dtype %s."
                            % (self._dtype.name, value.name, value.dtype.name))
        return value

    def _set_element_shape_on(self, value: Tensor, lead: bool) -> Tensor:
        es = self.element_shape
        if es.ndims is not None:
            value.set_shape(TensorShape([None]).concatenate(es) if lead else es)
        return value

    # --- methods -------------------------------------------------------------------
    def identity(self) -> "TensorArray":
        """A TensorArray with the same content whose flow is an Identity of this flow
        (forces the ops that produced this state to run before the identity)."""
        from tensorweave.ops.control_flow import structure
        return self._with_flow(structure.identity(self._flow))

    def grad(self, source: str, flow=None, name: Optional[str] = None) -> "TensorArray":
        """The gradient TensorArray of this one for gradient source `source`.

        The same (array, source) pair always names the same run-time gradient array;
        multiple writes to one index of it are summed.
        """
        from tensorweave.ops.control_flow import structure
        if flow is None:
            flow = self._flow
        with _graph.name_scope(name, "TensorArrayGrad", [self._handle]):
            op = apply_op("TensorArrayGradV3", [self._handle, flow], {"source": source},
                          name=name)
            with _graph.control_dependencies([op.outputs[0]]):
                flow = structure.identity(flow, name="gradient_flow")
        g = TensorArray(dtype=self._dtype, handle=op.outputs[0], flow=flow,
                        infer_shape=self._infer_shape, colocate_with_first_write_call=False)
        g._element_shape = self._element_shape
        return g

    def read(self, index, name: Optional[str] = None) -> Tensor:
        """The element at `index` (int32 scalar) as a Tensor."""
        value = apply_op("TensorArrayReadV3", [self._handle, index, self._flow],
                         {"dtype": self._dtype}, name=name or "TensorArrayReadV3").outputs[0]
        return self._set_element_shape_on(value, lead=False)

    def write(self, index, value, name: Optional[str] = None) -> "TensorArray":
        """Writes `value` at `index`; returns the new TensorArray (use it).

        Raises:
          ValueError: the value's shape is incompatible with the element shape.
          TypeError: the value's dtype differs from the array's.
        """
        with _graph.name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = self._value_tensor(value)
            self._merge_element_shape(value.shape)
            flow = apply_op("TensorArrayWriteV3", [self._handle, index, value, self._flow],
                            name=name or "TensorArrayWriteV3").outputs[0]
        return self._with_flow(flow)

    def stack(self, name: Optional[str] = None) -> Tensor:
        """All elements stacked along a new first dimension."""
        from tensorweave.ops.math import math_ops
        with _graph.name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(math_ops.range(0, self.size()), name=name)
            es = self.element_shape
            if es.ndims is not None and not self._dynamic_size and self._size is not None:
                n = tensor_util.constant_value(self._size)
                value.set_shape(TensorShape([None if n is None else int(n)]).concatenate(es))
            return value

    def gather(self, indices, name: Optional[str] = None) -> Tensor:
        """The elements at `indices` (int32 vector) stacked into one Tensor."""
        value = apply_op("TensorArrayGatherV3", [self._handle, indices, self._flow],
                         {"dtype": self._dtype, "element_shape": self.element_shape},
                         name=name or "TensorArrayGatherV3").outputs[0]
        return self._set_element_shape_on(value, lead=True)

    def concat(self, name: Optional[str] = None) -> Tensor:
        """All elements concatenated along their first dimension."""
        es = self.element_shape
        except0 = es[1:] if es.ndims else unknown_shape()
        op = apply_op("TensorArrayConcatV3", [self._handle, self._flow],
                      {"dtype": self._dtype, "element_shape_except0": except0},
                      name=name or "TensorArrayConcatV3")
        value = op.outputs[0]
        if es.ndims:
            dim0 = None
            if self._infer_shape:
                size = tensor_util.constant_value(self.size())
                if size is not None and es[0].value is not None:
                    dim0 = int(size) * es[0].value
            value.set_shape(TensorShape([dim0]).concatenate(except0))
        return value

    def unstack(self, value, name: Optional[str] = None) -> "TensorArray":
        """Writes the slices of `value` along dimension 0 at indices 0..n-1."""
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.math import math_ops
        with _graph.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = self._value_tensor(value)
            n = value.shape[0].value if value.shape.ndims else None
            num = n if n is not None else array_ops.shape(value)[0]
            return self.scatter(math_ops.range(0, num), value, name=name)

    def scatter(self, indices, value, name: Optional[str] = None) -> "TensorArray":
        """Writes the slices of `value` along dimension 0 at `indices` (int32 vector)."""
        with _graph.name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = self._value_tensor(value)
            if value.shape.ndims is not None:
                if value.shape.ndims == 0:
                    raise ValueError("Shape must be at least rank 1 but is rank 0 for the "
                                     "value of TensorArray.scatter")
                self._merge_element_shape(value.shape[1:])
            flow = apply_op("TensorArrayScatterV3",
                            [self._handle, indices, value, self._flow],
                            name=name or "TensorArrayScatterV3").outputs[0]
        return self._with_flow(flow)

    def split(self, value, lengths, name: Optional[str] = None) -> "TensorArray":
        """Splits `value` along dimension 0 into pieces of `lengths` (int vector) and
        writes piece i at index i."""
        from tensorweave.ops.math import math_ops
        with _graph.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = self._value_tensor(value)
            lengths_64 = lengths if isinstance(lengths, Tensor) else \
                convert_to_tensor(np.asarray(lengths), name="lengths")
            if lengths_64.dtype is not _dt.int64:
                lengths_64 = math_ops.cast(lengths_64, _dt.int64)
            if self._infer_shape and value.shape.ndims:
                c = tensor_util.constant_value(lengths_64)
                if c is not None and c.size and c.max() == c.min():
                    self._merge_element_shape(
                        TensorShape([int(c.reshape(-1)[0])]).concatenate(value.shape[1:]))
            flow = apply_op("TensorArraySplitV3",
                            [self._handle, value, lengths_64, self._flow],
                            name=name or "TensorArraySplitV3").outputs[0]
        return self._with_flow(flow)

    def size(self, name: Optional[str] = None) -> Tensor:
        """The current size of the array (int32 scalar)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=_dt.int32)
        return apply_op("TensorArraySizeV3", [self._handle, self._flow],
                        name=name or "TensorArraySizeV3").outputs[0]

    def close(self, name: Optional[str] = None):
        """Closes the array, freeing its elements; returns the close Operation."""
        return apply_op("TensorArrayCloseV3", [self._handle],
                        name=name or "TensorArrayCloseV3")

    def __repr__(self):
        return "<TensorArray handle=%s flow=%s dtype=%s>" % (
            self._handle.name, self._flow.name, self._dtype.name)
