"""Gradients of the TensorList ops, as TF's python/ops/list_ops.py registers them.

The gradient of a list is a list (of the gradients of its elements), so the duals pair
up: Stack <-> FromTensor, GetItem <-> SetItem, PushBack <-> PopBack, Gather <-> Scatter,
Concat <-> Split, Resize <-> Resize. Partial gradients of one list are summed by AddN
and a missing one is ZerosLike of the list (both work on lists, list_ops.py's module
docstring), as in TF.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import gradient
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing.indexing_ops import slice as _slice


def _op(op_type: str, inputs, **attrs):
    """The outputs of a new list op (one tensor when there is one)."""
    outputs = apply_op(op_type, inputs, attrs=attrs).outputs
    return outputs[0] if len(outputs) == 1 else outputs


def _shape_after_first(t):
    """The shape of `t` without its first dimension, as a run-time int32 vector."""
    return _slice(array_ops.shape(t), [1], [-1])


def _element_shape_of(lst, shape_type=_dt.int32):
    return _op("TensorListElementShape", [lst], shape_type=shape_type)


def _static_element_shape(shape):
    """A static TensorShape as an element_shape input value (TF's
    _build_element_shape): -1 for an unknown rank, -1 for each unknown dimension."""
    if shape.ndims is None:
        return -1
    return [-1 if d is None else d for d in shape.as_list()]


@gradient("TensorListPushBack")
def _push_back_grad(op, dresult):
    dlist, ditem = _op("TensorListPopBack", [dresult, array_ops.shape(op.inputs[1])],
                       element_dtype=op._get_attr("element_dtype"))
    return [dlist, ditem]


@gradient("TensorListPopBack")
def _pop_back_grad(op, dlist, delement):
    if dlist is None:
        dlist = _op("EmptyTensorList", [_element_shape_of(op.outputs[0]), -1],
                    element_dtype=op._get_attr("element_dtype"))
    if delement is None:
        delement = array_ops.zeros_like(op.outputs[1])
    return [_op("TensorListPushBack", [dlist, delement]), None]


@gradient("TensorListStack")
def _stack_grad(op, dtensor):
    shape = _static_element_shape(dtensor.shape[1:]) if dtensor.shape.ndims else -1
    return [_op("TensorListFromTensor", [dtensor, shape]), None]


@gradient("TensorListConcat")
@gradient("TensorListConcatV2")
def _concat_grad(op, dtensor, unused_dlengths):
    dlist = _op("TensorListSplit", [dtensor, _element_shape_of(op.inputs[0]),
                                    op.outputs[1]])
    return [dlist, None, None] if op.type == "TensorListConcatV2" else [dlist]


@gradient("TensorListSplit")
def _split_grad(op, dlist):
    tensor, _, lengths = op.inputs
    shape = array_ops.concat([[-1], _shape_after_first(tensor)], axis=0)
    dtensor = _op("TensorListConcatV2", [dlist, shape, lengths],
                  element_dtype=tensor.dtype)[0]
    return [dtensor, None, None]


@gradient("TensorListFromTensor")
def _from_tensor_grad(op, dlist):
    t = op.inputs[0]
    rows = t.shape[0].value if t.shape.ndims else None
    if dlist is None:
        dlist = _op("EmptyTensorList", [_element_shape_of(op.outputs[0]), -1],
                    element_dtype=t.dtype)
    dtensor = _op("TensorListStack", [dlist, _shape_after_first(t)], element_dtype=t.dtype,
                  num_elements=-1 if rows is None else rows)
    return [dtensor, None]


@gradient("TensorListGetItem")
def _get_item_grad(op, ditem):
    lst = op.inputs[0]
    zeros = _op("TensorListReserve", [_element_shape_of(lst),
                                      _op("TensorListLength", [lst])],
                element_dtype=ditem.dtype)
    return [_op("TensorListSetItem", [zeros, op.inputs[1], ditem]), None, None]


@gradient("TensorListSetItem")
def _set_item_grad(op, dlist):
    lst, index, item = op.inputs
    list_grad = _op("TensorListSetItem", [dlist, index, array_ops.zeros_like(item)])
    item_grad = _op("TensorListGetItem", [dlist, index, array_ops.shape(item)],
                    element_dtype=item.dtype)
    if op._get_attr("resize_if_index_out_of_bounds"):
        list_grad = _op("TensorListResize", [list_grad, _op("TensorListLength", [lst])])
    return [list_grad, None, item_grad]


@gradient("TensorListResize")
def _resize_grad(op, dlist):
    return [_op("TensorListResize", [dlist, _op("TensorListLength", [op.inputs[0]])]), None]


@gradient("TensorListGather")
def _gather_grad(op, dtensor):
    lst, indices, _ = op.inputs
    dlist = _op("TensorListReserve", [_element_shape_of(lst),
                                      _op("TensorListLength", [lst])],
                element_dtype=dtensor.dtype)
    dlist = _op("TensorListScatterIntoExistingList", [dlist, dtensor, indices])
    return [dlist, None, None]


@gradient("TensorListScatter")
@gradient("TensorListScatterV2")
def _scatter_grad(op, dlist):
    tensor, indices = op.inputs[0], op.inputs[1]
    dtensor = _op("TensorListGather", [dlist, indices, _shape_after_first(tensor)],
                  element_dtype=tensor.dtype)
    return [dtensor] + [None] * (len(op.inputs) - 1)


@gradient("TensorListScatterIntoExistingList")
def _scatter_into_grad(op, dlist):
    _, tensor, indices = op.inputs
    dtensor = _op("TensorListGather", [dlist, indices, _shape_after_first(tensor)],
                  element_dtype=tensor.dtype)
    dlist = _op("TensorListScatterIntoExistingList",
                [dlist, array_ops.zeros_like(tensor), indices])
    return [dlist, dtensor, None]
