"""TF 2.x's TensorList ops (tensorflow/core/ops/list_ops.cc): lists of tensors carried
as scalar variant values, as TF 2.x writes a TensorArray inside functional control flow.

Each op's value is a new immutable TensorList (tensor_list.py); nothing is a resource, so
the ops are stateless and a list is an ordinary loop variable of a while_loop (a scalar
variant). Their gradients are in list_ops_grad.py.

At build time a list tensor's element dtype and shape are read from the op that made the
list (`static_list`), following it through the ops that pass a list along, as TF's
shape inference reads a variant's handle data: so a dtype mismatch is a ValueError when
the graph is built and TensorListStack/GetItem/Gather have static shapes.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops.data_flow.element_shapes import compatible, dims_str, fully_defined
from tensorweave.ops.data_flow.tensor_list import TensorList, get_list, merge_dims, \
    shape_from_tensor, as_element, element_dims

__all__ = ["static_list"]

_SHAPE_TYPE = TypeAttr([_dt.int32, _dt.int64])
_SCALAR = TensorShape([])

# --- build time: what a list tensor holds ----------------------------------------------
# ops whose output list is (an update of) their first input's list
_PASSES_LIST = frozenset([
    "TensorListSetItem", "TensorListPushBack", "TensorListPopBack", "TensorListResize",
    "TensorListScatterIntoExistingList", "TensorListConcatLists", "Identity",
    "Snapshot", "StopGradient", "Enter", "RefEnter", "Exit", "RefExit", "Switch",
    "RefSwitch", "Merge", "RefMerge", "NextIteration", "RefNextIteration", "ZerosLike",
    "AddN"])
# ops making a list: the input giving its element shape, and the tensor whose rows
# are its elements (None for none)
_MAKES_LIST = {"EmptyTensorList": (0, None), "TensorListReserve": (0, None),
               "TensorListFromTensor": (1, 0), "TensorListScatter": (2, 0),
               "TensorListScatterV2": (2, 0), "TensorListSplit": (1, None)}


def element_shape_input(op, i: int) -> TensorShape:
    """The static partial shape an `element_shape` input of `op` describes.

    Raises:
      ValueError: a scalar other than -1, or a tensor of rank above 1 (TF's messages).
    """
    t = op.inputs[i]
    if t.shape.ndims is not None and t.shape.ndims > 1:
        raise ValueError("Shape must be at most rank 1 but is rank %d" % t.shape.ndims)
    if t.shape.ndims == 0:
        v = constant_value(t)
        if v is not None and int(v) != -1:
            raise ValueError("Received an invalid shape scalar with a static value that is "
                             "not '-1': %s" % int(v))
        return unknown_shape()
    return constant_value_as_shape(t)


def _passes_list(t) -> bool:
    """Whether `t` is its op's first input's list, passed on or updated (PopBack's item,
    its output 1, is not: in a list of lists it is another list)."""
    op = t.op
    return (op.type in _PASSES_LIST and bool(op.inputs)
            and not (op.type == "TensorListPopBack" and t.value_index != 0))


def static_list(t) -> Tuple[Optional[_dt.DType], TensorShape]:
    """(element dtype, element shape) of the list tensor `t` as far as they are known
    when the graph is built; (None, unknown) where the list comes from elsewhere."""
    hops = 0
    while _passes_list(t) and hops < 10000:
        t, hops = t.op.inputs[0], hops + 1
    op = t.op
    if op.type not in _MAKES_LIST:
        return None, unknown_shape()
    shape_at, rows_at = _MAKES_LIST[op.type]
    try:
        shape = element_shape_input(op, shape_at)
        if rows_at is not None and op.inputs[rows_at].shape.ndims:
            shape = shape.merge_with(op.inputs[rows_at].shape[1:])
    except ValueError:
        shape = unknown_shape()
    return op._get_attr("element_dtype"), shape


def _check_read_dtype(op, i: int = 0, what: str = "Expected list with element dtype "
                      "%(want)s but got list with element dtype %(have)s") -> TensorShape:
    """The static element shape of input `i`'s list, after checking its dtype is the
    op's element_dtype."""
    dtype, shape = static_list(op.inputs[i])
    want = op._get_attr("element_dtype")
    if dtype is not None and dtype is not want:
        raise ValueError(what % {"want": _dt.type_string(want),
                                 "have": _dt.type_string(dtype)})
    return shape


def _with_element_shape(op, list_shape: TensorShape, i: int) -> TensorShape:
    return list_shape.merge_with(element_shape_input(op, i))


# --- shape functions ------------------------------------------------------------------
def _new_list_shape(op):
    shape_at, rows_at = _MAKES_LIST[op.type]
    es = element_shape_input(op, shape_at)
    if rows_at is not None and op.inputs[rows_at].shape.ndims:  # a scalar: a run error
        es.merge_with(op.inputs[rows_at].shape[1:])
    return _SCALAR


def _split_shape(op):
    es = element_shape_input(op, 1)
    pieces = op.inputs[0].shape
    if pieces.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if es.ndims and pieces.ndims is not None:  # all dimensions but the first must agree
        TensorShape([None]).concatenate(es[1:]).merge_with(
            TensorShape([None]).concatenate(pieces[1:]))
    return _SCALAR


def _stack_shape(op):
    es = _with_element_shape(op, _check_read_dtype(op, what=(
        "Trying to read from list with wrong element dtype. List has type %(have)s but "
        "expected type %(want)s")), 1)
    n = op._get_attr("num_elements")
    return TensorShape([None if n == -1 else n]).concatenate(es)


def _get_item_shape(op):
    return _with_element_shape(op, _check_read_dtype(op), 2)


def _gather_shape(op):
    es = _with_element_shape(op, _check_read_dtype(op), 2)
    return op.inputs[1].shape.with_rank(1).concatenate(es)


def _pop_back_shape(op):
    es = _with_element_shape(op, _check_read_dtype(op, what=(
        "Trying to read from list with wrong element dtype. List has type %(have)s but "
        "trying to push element with type %(want)s")), 1)
    return [_SCALAR, es]


def _set_item_shape(op):
    static_list(op.inputs[0])[1].merge_with(op.inputs[2].shape)
    return _SCALAR


def _push_back_shape(op):
    dtype = static_list(op.inputs[0])[0]
    want = op._get_attr("element_dtype")
    if dtype is not None and dtype is not want:
        raise ValueError("Trying to push to list with wrong element dtype. List has type %s "
                         "but trying to push element with type %s"
                         % (_dt.type_string(dtype), _dt.type_string(want)))
    return _SCALAR


def _scatter_into_shape(op):
    _check_read_dtype(op)
    return _SCALAR


def _concat_shape(op):
    es = _check_read_dtype(op)
    if op.type == "TensorListConcatV2":  # TF checks their agreement at run time only
        try:
            es = _with_element_shape(op, es, 1)
        except ValueError:
            es = element_shape_input(op, 1)
    else:
        es = es.merge_with(op._get_attr("element_shape"))
    rest = unknown_shape() if es.ndims is None else es[1:]
    return [TensorShape([None]).concatenate(rest), TensorShape([None])]


def _element_shape_shape(op):
    es = static_list(op.inputs[0])[1]
    return TensorShape([None]) if es.ndims is None else TensorShape([es.ndims])


def _concat_lists_shape(op):
    want = op._get_attr("element_dtype")
    for name, t in (("input_a", op.inputs[0]), ("input_b", op.inputs[1])):
        dtype, _ = static_list(t)
        if dtype is not None and dtype is not want:
            raise ValueError("%s.type != element_dtype: %s vs. %s"
                             % (name, _dt.type_string(dtype), _dt.type_string(want)))
    static_list(op.inputs[0])[1].merge_with(static_list(op.inputs[1])[1])
    return op.inputs[0].shape.merge_with(op.inputs[1].shape)


_LIST_ATTRS = {"element_dtype": TypeAttr(), "shape_type": _SHAPE_TYPE}

register_op("EmptyTensorList", inputs=["element_shape: shape_type", "max_num_elements: int32"],
            outputs=["handle: variant"], attrs=_LIST_ATTRS, shape=_new_list_shape)
register_op("TensorListReserve", inputs=["element_shape: shape_type", "num_elements: int32"],
            outputs=["handle: variant"], attrs=_LIST_ATTRS, shape=_new_list_shape)
register_op("TensorListFromTensor", inputs=["tensor: element_dtype",
                                            "element_shape: shape_type"],
            outputs=["output_handle: variant"], attrs=_LIST_ATTRS, shape=_new_list_shape)
register_op("TensorListScatter", inputs=["tensor: element_dtype", "indices: int32",
                                         "element_shape: shape_type"],
            outputs=["output_handle: variant"], attrs=_LIST_ATTRS, shape=_new_list_shape)
register_op("TensorListScatterV2", inputs=["tensor: element_dtype", "indices: int32",
                                           "element_shape: shape_type",
                                           "num_elements: int32"],
            outputs=["output_handle: variant"], attrs=_LIST_ATTRS, shape=_new_list_shape)
register_op("TensorListSplit", inputs=["tensor: element_dtype", "element_shape: shape_type",
                                       "lengths: int64"],
            outputs=["output_handle: variant"], attrs=_LIST_ATTRS, shape=_split_shape)
register_op("TensorListStack", inputs=["input_handle: variant", "element_shape: int32"],
            outputs=["tensor: element_dtype"],
            attrs={"element_dtype": TypeAttr(), "num_elements": -1}, shape=_stack_shape)
register_op("TensorListGetItem", inputs=["input_handle: variant", "index: int32",
                                         "element_shape: Tshape"],
            outputs=["item: element_dtype"],
            attrs={"element_dtype": TypeAttr(),
                   "Tshape": TypeAttr([_dt.int32, _dt.int64], default=_dt.int32)},
            shape=_get_item_shape)
register_op("TensorListGather", inputs=["input_handle: variant", "indices: int32",
                                        "element_shape: int32"],
            outputs=["values: element_dtype"], attrs={"element_dtype": TypeAttr()},
            shape=_gather_shape)
register_op("TensorListSetItem", inputs=["input_handle: variant", "index: int32",
                                         "item: element_dtype"],
            outputs=["output_handle: variant"],
            attrs={"element_dtype": TypeAttr(), "resize_if_index_out_of_bounds": False},
            shape=_set_item_shape)
register_op("TensorListPushBack", inputs=["input_handle: variant", "tensor: element_dtype"],
            outputs=["output_handle: variant"], attrs={"element_dtype": TypeAttr()},
            shape=_push_back_shape)
register_op("TensorListPopBack", inputs=["input_handle: variant", "element_shape: int32"],
            outputs=["output_handle: variant", "tensor: element_dtype"],
            attrs={"element_dtype": TypeAttr()}, shape=_pop_back_shape)
register_op("TensorListScatterIntoExistingList",
            inputs=["input_handle: variant", "tensor: element_dtype", "indices: int32"],
            outputs=["output_handle: variant"], attrs={"element_dtype": TypeAttr()},
            shape=_scatter_into_shape)
register_op("TensorListConcat", inputs=["input_handle: variant"],
            outputs=["tensor: element_dtype", "lengths: int64"],
            attrs={"element_dtype": TypeAttr(), "element_shape": TensorShape(None)},
            shape=_concat_shape)
register_op("TensorListConcatV2", inputs=["input_handle: variant",
                                          "element_shape: shape_type",
                                          "leading_dims: int64"],
            outputs=["tensor: element_dtype", "lengths: int64"], attrs=_LIST_ATTRS,
            shape=_concat_shape)
register_op("TensorListLength", inputs=["input_handle: variant"], outputs=["length: int32"],
            shape=lambda op: _SCALAR)
register_op("TensorListElementShape", inputs=["input_handle: variant"],
            outputs=["element_shape: shape_type"], attrs={"shape_type": _SHAPE_TYPE},
            shape=_element_shape_shape)
register_op("TensorListResize", inputs=["input_handle: variant", "size: int32"],
            outputs=["output_handle: variant"], shape=lambda op: _SCALAR)
register_op("TensorListConcatLists", inputs=["input_a: variant", "input_b: variant"],
            outputs=["output: variant"], attrs={"element_dtype": TypeAttr()},
            shape=_concat_lists_shape)
register_op("TensorListPushBackBatch", inputs=["input_handles: variant",
                                               "tensor: element_dtype"],
            outputs=["output_handles: variant"], attrs={"element_dtype": TypeAttr()},
            shape=lambda op: op.inputs[0].shape)

for _t in ("EmptyTensorList", "TensorListReserve", "TensorListLength",
           "TensorListElementShape", "TensorListConcatLists", "TensorListPushBackBatch"):
    not_differentiable(_t)


# --- kernel helpers ---------------------------------------------------------------------
def _fail(ctx, message: str):
    raise errors.InvalidArgumentError(None, ctx.op, message)


def _int(value) -> int:
    return int(np.asarray(value))


def _check_dtype(ctx, lst: TensorList) -> TensorList:
    want = ctx.attrs["element_dtype"]
    if lst.element_dtype is not want:
        _fail(ctx, "Invalid data types; op elements %s but list elements %s"
              % (_dt.type_string(want), _dt.type_string(lst.element_dtype)))
    return lst


def _input_list(ctx, value) -> TensorList:
    """The input list, checked to hold the op's element_dtype."""
    return _check_dtype(ctx, get_list(ctx.op, value))


def _element_shape(ctx, lst: TensorList, value):
    """The element_shape input merged with the list's (TF's GetElementShapeFromInput)."""
    return merge_dims(shape_from_tensor(ctx.op, value), lst.element_shape, ctx.op)


def _merge_set_shapes(ctx, lst: TensorList, shape, indices=None):
    """`shape` merged with the shapes of the set elements (those at `indices`), unless
    the list's own element shape is fully defined (its elements then all have it)."""
    if fully_defined(lst.element_shape):
        return shape
    picked = lst.tensors if indices is None else [lst.tensors[i] for i in indices]
    for t in picked:
        if t is not None:
            shape = merge_dims(shape, element_dims(t), ctx.op)
    return shape


def _rows(ctx, tensor, what: str = "Tensor must be at least a vector, but saw shape: %s"):
    """`tensor` as an array of rank >= 1 (its rows become list elements)."""
    a = ctx.xp.asarray(tensor)
    if a.ndim == 0:
        _fail(ctx, what % dims_str(a.shape))
    return a


def _stack(ctx, tensors, shape, dtype) -> np.ndarray:
    """The elements stacked, zeros of `shape` (fully defined) in place of unset ones."""
    out = ctx.xp.zeros((len(tensors),) + tuple(shape), dtype=dtype.as_numpy_dtype)
    for i, t in enumerate(tensors):
        if t is not None:
            out[i] = t
    return out


def _check_indices(ctx, indices) -> List[int]:
    idx = np.asarray(indices)
    if idx.ndim != 1:
        _fail(ctx, "Expected indices to be a vector, but received shape: %s"
              % dims_str(idx.shape))
    return [int(i) for i in idx.tolist()]


# --- kernels: making lists --------------------------------------------------------------
@kernel("EmptyTensorList")
def _empty_kernel(ctx, element_shape, max_num_elements):
    m = np.asarray(max_num_elements)
    if m.ndim != 0:
        _fail(ctx, "max_num_elements expected to be a scalar but got shape: %s"
              % dims_str(m.shape))
    shape = shape_from_tensor(ctx.op, element_shape)
    return TensorList((), ctx.attrs["element_dtype"], shape, int(m))


@kernel("TensorListReserve")
def _reserve_kernel(ctx, element_shape, num_elements):
    shape = shape_from_tensor(ctx.op, element_shape)
    n = _int(num_elements)
    if n < 0:
        _fail(ctx, "The num_elements to reserve must be a non negative number, but got %d"
              % n)
    return TensorList((None,) * n, ctx.attrs["element_dtype"], shape)


def _list_of_rows(ctx, tensor, element_shape):
    """(rows of `tensor`, the list's element shape), checked to be compatible."""
    shape = shape_from_tensor(ctx.op, element_shape)
    a = _rows(ctx, tensor)
    if not compatible(shape, a.shape[1:]):
        _fail(ctx, "Specified a list with shape %s from a tensor with shape %s"
              % (dims_str(shape), dims_str(a.shape[1:])))
    return a, shape


@kernel("TensorListFromTensor")
def _from_tensor_kernel(ctx, tensor, element_shape):
    a, shape = _list_of_rows(ctx, tensor, element_shape)
    return TensorList(list(a), ctx.attrs["element_dtype"], shape)


def _scatter(ctx, tensor, indices, element_shape, num_elements: int) -> TensorList:
    if num_elements < -1:
        _fail(ctx, "TensorListScatter expects num_elements >= -1, found: %d" % num_elements)
    a, shape = _list_of_rows(ctx, tensor, element_shape)
    idx = _check_indices(ctx, indices)
    if len(idx) != a.shape[0]:
        _fail(ctx, "Invalid number of rows in input tensor. Expected: %d Actual: %d"
              % (len(idx), a.shape[0]))
    for i in idx:
        if i < 0:
            _fail(ctx, "Indices in TensorListScatter must all be non-negative.")
        if num_elements != -1 and i >= num_elements:
            _fail(ctx, "TensorListScatter: Trying to scatter at index %d in list with size "
                  "%d" % (i, num_elements))
    tensors = [None] * max(max(idx, default=-1) + 1, num_elements)
    for row, i in zip(a, idx):
        tensors[i] = row
    return TensorList(tensors, ctx.attrs["element_dtype"], shape)


@kernel("TensorListScatter")
def _scatter_kernel(ctx, tensor, indices, element_shape):
    return _scatter(ctx, tensor, indices, element_shape, -1)


@kernel("TensorListScatterV2")
def _scatter_v2_kernel(ctx, tensor, indices, element_shape, num_elements):
    return _scatter(ctx, tensor, indices, element_shape, _int(num_elements))


@kernel("TensorListSplit")
def _split_kernel(ctx, tensor, element_shape, lengths):
    shape = shape_from_tensor(ctx.op, element_shape)
    if shape is not None and not shape:
        _fail(ctx, "TensorListSplit requires element_shape to be at least of rank 1, but "
              "saw: %s" % dims_str(shape))
    a = _rows(ctx, tensor)
    if shape is not None and not compatible(shape[1:], a.shape[1:]):
        _fail(ctx, "tensor shape %s is not compatible with element_shape %s"
              % (dims_str(a.shape), dims_str(shape)))
    sizes = np.asarray(lengths)
    if sizes.ndim != 1:
        _fail(ctx, "Expected lengths to be a vector, received shape: %s"
              % dims_str(sizes.shape))
    pieces, start = [], 0
    for n in sizes.tolist():
        if n < 0:
            _fail(ctx, "Invalid value in lengths: %d" % n)
        if start + n > a.shape[0]:
            _fail(ctx, "Attempting to slice [%d, %d] from tensor with length %d"
                  % (start, start + n, a.shape[0]))
        pieces.append(a[start:start + n])
        start += n
    if start != a.shape[0]:
        _fail(ctx, "Unused values in tensor. Length of tensor: %d Values used: %d"
              % (a.shape[0], start))
    return TensorList(pieces, ctx.attrs["element_dtype"], shape)


# --- kernels: reading -------------------------------------------------------------------
@kernel("TensorListStack")
def _stack_kernel(ctx, handle, element_shape):
    lst = _input_list(ctx, handle)
    n = ctx.attrs["num_elements"]
    if n != -1 and len(lst) != n:
        _fail(ctx, "Operation expected a list with %d elements but got a list with %d "
              "elements." % (n, len(lst)))
    shape = _element_shape(ctx, lst, element_shape)
    if not fully_defined(shape) and not lst.tensors:
        _fail(ctx, "Tried to stack elements of an empty list with non-fully-defined "
              "element_shape: %s" % dims_str(shape))
    shape = _merge_set_shapes(ctx, lst, shape)
    if not fully_defined(shape):
        _fail(ctx, "Tried to stack list which only contains uninitialized tensors and has "
              "a non-fully-defined element_shape: %s" % dims_str(shape))
    return _stack(ctx, lst.tensors, shape, lst.element_dtype)


@kernel("TensorListGetItem")
def _get_item_kernel(ctx, handle, index, element_shape):
    lst = _input_list(ctx, handle)
    i = _int(index)
    if i < 0 or i >= len(lst):
        _fail(ctx, "Trying to access element %d in a list with %d elements." % (i, len(lst)))
    item = lst.tensors[i]
    if item is not None:
        return item
    shape = _merge_set_shapes(ctx, lst, _element_shape(ctx, lst, element_shape))
    if not fully_defined(shape):
        _fail(ctx, "Trying to read an uninitialized tensor but element_shape is not fully "
              "defined: %s and no list element is set." % dims_str(shape))
    return ctx.xp.zeros(shape, dtype=lst.element_dtype.as_numpy_dtype)


@kernel("TensorListGather")
def _gather_kernel(ctx, handle, indices, element_shape):
    lst = _input_list(ctx, handle)
    idx = _check_indices(ctx, indices)
    shape = _element_shape(ctx, lst, element_shape)
    if not fully_defined(shape) and not idx:
        _fail(ctx, "Tried to gather 0-elements from a list with non-fully-defined shape: "
              "%s" % dims_str(shape))
    for i in idx:
        if i < 0 or i >= len(lst):
            _fail(ctx, "Index %d out o range; list only has %d elements." % (i, len(lst)))
    shape = _merge_set_shapes(ctx, lst, shape, idx)
    if not fully_defined(shape):
        _fail(ctx, "Tried to gather uninitialized tensors from a list with "
              "non-fully-defined element_shape: %s" % dims_str(shape))
    return _stack(ctx, [lst.tensors[i] for i in idx], shape, lst.element_dtype)


def _concat_rest_shape(ctx, lst: TensorList, element_shape):
    """(first dimension or None, the element shape without it) that a concat of `lst`
    is given: the attr of TensorListConcat, the input of TensorListConcatV2."""
    if ctx.op.type == "TensorListConcat":
        dims = ctx.attrs["element_shape"]
        dims = None if dims.ndims is None else tuple(dims.as_list())
        return None, (None if dims is None else dims[1:])
    dims = _element_shape(ctx, lst, element_shape)
    if dims is not None and not dims:
        _fail(ctx, "Concat requires elements to be at least vectors, found scalars "
              "instead.")
    return (None, None) if dims is None else (dims[0], dims[1:])


def _concat_first_dims(ctx, lst: TensorList, first, rest):
    """(the shape after the first dimension, each element's first dimension or None
    where unset, the first dimension of an unset element or None), checking the set
    elements against `first` and `rest`."""
    if fully_defined(lst.element_shape):
        return rest, [None if t is None else t.shape[0] for t in lst.tensors], first
    inferred, agree, lengths = first, first is None, []
    for i, t in enumerate(lst.tensors):
        if t is None:
            lengths.append(None)
            continue
        if t.ndim == 0:
            _fail(ctx, "Concat saw a scalar shape at index %d but requires at least "
                  "vectors." % i)
        rest = merge_dims(rest, t.shape[1:], ctx.op)
        if first is not None and first != t.shape[0]:
            _fail(ctx, "First entry of element_shape input does not match the first dim of "
                  "list element at index: %d Expected: %d Actual: %d"
                  % (i, first, t.shape[0]))
        if agree:
            if inferred is None:
                inferred = t.shape[0]
            elif inferred != t.shape[0]:
                inferred, agree = None, False
        lengths.append(t.shape[0])
    return rest, lengths, inferred


def _concat(ctx, handle, element_shape=None, leading_dims=None):
    lst = _input_list(ctx, handle)
    first, rest = _concat_rest_shape(ctx, lst, element_shape)
    if not lst.tensors and not fully_defined(rest):
        _fail(ctx, "All except the first dimension must be fully defined when concating an "
              "empty tensor list. element_shape: %s" % dims_str(rest))
    rest, lengths, first = _concat_first_dims(ctx, lst, first, rest)
    if not fully_defined(rest):
        _fail(ctx, "Trying to concat list with only uninitialized tensors but "
              "element_shape_except_first_dim is not fully defined: %s" % dims_str(rest))
    given = [] if leading_dims is None else np.asarray(leading_dims).reshape(-1).tolist()
    for i, n in enumerate(lengths):
        if n is not None:
            continue
        if i >= len(given) and first is not None:
            lengths[i] = first
        elif leading_dims is None:
            _fail(ctx, "Concating lists with uninitialized tensors is not supported in this "
                  "version of TensorListConcat. Consider updating your GraphDef to run the "
                  "newer version.")
        elif i >= len(given):
            _fail(ctx, "List contains uninitialized tensor at index %d but leading_dims has "
                  "only %d elements." % (i, len(given)))
        else:
            lengths[i] = int(given[i])
    dtype = lst.element_dtype.as_numpy_dtype
    parts = [ctx.xp.zeros((n,) + tuple(rest), dtype=dtype) if t is None else t
             for t, n in zip(lst.tensors, lengths)]
    out = ctx.xp.concatenate(parts) if parts else ctx.xp.zeros((0,) + tuple(rest), dtype)
    return out, np.asarray(lengths, np.int64)


@kernel("TensorListConcat")
def _concat_kernel(ctx, handle):
    return _concat(ctx, handle)


@kernel("TensorListConcatV2")
def _concat_v2_kernel(ctx, handle, element_shape, leading_dims):
    return _concat(ctx, handle, element_shape, leading_dims)


@kernel("TensorListLength")
def _length_kernel(ctx, handle):
    return np.int32(len(get_list(ctx.op, handle)))


@kernel("TensorListElementShape")
def _element_shape_kernel(ctx, handle):
    shape = get_list(ctx.op, handle).element_shape
    np_type = ctx.attrs["shape_type"].as_numpy_dtype
    if shape is None:
        return np.asarray(-1, np_type)
    return np.asarray([-1 if d is None else d for d in shape], np_type)


# --- kernels: new lists from old ones ---------------------------------------------------
@kernel("TensorListSetItem")
def _set_item_kernel(ctx, handle, index, item):
    lst = _input_list(ctx, handle)
    i = _int(index)
    tensors = list(lst.tensors)
    if ctx.attrs["resize_if_index_out_of_bounds"] and i >= len(tensors):
        tensors.extend([None] * (i + 1 - len(tensors)))
    if i < 0 or i >= len(tensors):
        _fail(ctx, "Trying to modify element %d in a list with %d elements." % (i, len(lst)))
    value = as_element(ctx.xp, item)
    if not compatible(lst.element_shape, element_dims(value)):
        _fail(ctx, "Tried to set a tensor with incompatible shape at a list index. Item "
              "element shape: %s list shape: %s"
              % (dims_str(element_dims(value)), dims_str(lst.element_shape)))
    tensors[i] = value
    return lst.replace(tensors)


@kernel("TensorListPushBack")
def _push_back_kernel(ctx, handle, tensor):
    lst = get_list(ctx.op, handle)
    value = as_element(ctx.xp, tensor)
    if not compatible(lst.element_shape, element_dims(value)):
        _fail(ctx, "Tried to append a tensor with incompatible shape to a list. Op element "
              "shape: %s list shape: %s" % (dims_str(element_dims(value)),
                                            dims_str(lst.element_shape)))
    _check_dtype(ctx, lst)  # after the shape, as TF checks them
    if lst.max_num_elements != -1 and len(lst) >= lst.max_num_elements:
        _fail(ctx, "Tried to push item into a full list list size: %d max_num_elements: %d"
              % (len(lst), lst.max_num_elements))
    return lst.replace(lst.tensors + (value,))


@kernel("TensorListPopBack")
def _pop_back_kernel(ctx, handle, element_shape):
    lst = _input_list(ctx, handle)
    if not lst.tensors:
        _fail(ctx, "Trying to pop from an empty list.")
    item = lst.tensors[-1]
    if item is None:
        shape = _element_shape(ctx, lst, element_shape)
        if not fully_defined(shape):
            _fail(ctx, "Trying to read an uninitialized tensor but element_shape is not "
                  "fully defined.%s" % dims_str(shape))
        item = ctx.xp.zeros(shape, dtype=lst.element_dtype.as_numpy_dtype)
    return lst.replace(lst.tensors[:-1]), item


@kernel("TensorListScatterIntoExistingList")
def _scatter_into_kernel(ctx, handle, tensor, indices):
    lst = get_list(ctx.op, handle)
    a = ctx.xp.asarray(tensor)
    if _dt.as_dtype(ctx.attrs["element_dtype"]) is not lst.element_dtype:
        _fail(ctx, "Invalid data types; input tensor type: %s list element_type: %s"
              % (_dt.type_string(ctx.attrs["element_dtype"]),
                 _dt.type_string(lst.element_dtype)))
    a = _rows(ctx, a)
    idx = _check_indices(ctx, indices)
    if len(idx) != a.shape[0]:
        _fail(ctx, "Expected len(indices) == tensor.shape[0], but saw: %d vs. %d"
              % (len(idx), a.shape[0]))
    if any(i < 0 for i in idx):  # TF reads out of bounds here; we refuse
        _fail(ctx, "Indices in TensorListScatterIntoExistingList must all be "
              "non-negative.")
    tensors = list(lst.tensors)
    tensors.extend([None] * (max(idx, default=-1) + 1 - len(tensors)))
    for row, i in zip(a, idx):
        tensors[i] = row
    return lst.replace(tensors)


@kernel("TensorListResize")
def _resize_kernel(ctx, handle, size):
    lst = get_list(ctx.op, handle)
    n = _int(size)
    if n < 0:
        _fail(ctx, "TensorListSlice expects size to be non-negative. Got: %d" % n)
    tensors = lst.tensors[:n] + (None,) * max(0, n - len(lst))
    return lst.replace(tensors)


def _concat_two(ctx, a, b, at: int) -> TensorList:
    want = ctx.attrs["element_dtype"]
    for name, value in (("input_a", a), ("input_b", b)):
        if type(value) is not TensorList:
            _fail(ctx, "%s is not a TensorList at index %d.  Saw: '%s'" % (name, at, value))
        if value.element_dtype is not want:
            _fail(ctx, "%s[%d].dtype != element_dtype.  Saw: %s vs. %s"
                  % (name, at, _dt.type_string(value.element_dtype),
                     _dt.type_string(want)))
    if a.element_shape != b.element_shape:
        _fail(ctx, "input_a and input_b TensorList element shapes are not identical at "
              "index %d.  Saw %s vs. %s" % (at, dims_str(a.element_shape),
                                            dims_str(b.element_shape)))
    return a.replace(a.tensors + b.tensors)


def _as_batch(value) -> np.ndarray:
    """A variant input as an object array of lists (a scalar list: a 0-d array)."""
    if isinstance(value, np.ndarray):
        return value
    batch = np.empty((), dtype=object)
    batch[()] = value
    return batch


@kernel("TensorListConcatLists")
def _concat_lists_kernel(ctx, input_a, input_b):
    a, b = _as_batch(input_a), _as_batch(input_b)
    if a.shape != b.shape:
        _fail(ctx, "Incompatible input TensorList tensor shapes: %s vs. %s"
              % (dims_str(a.shape), dims_str(b.shape)))
    if a.ndim == 0:
        return _concat_two(ctx, a[()], b[()], 0)
    out = np.empty(a.shape, dtype=object)
    for k, (x, y) in enumerate(zip(a.reshape(-1), b.reshape(-1))):
        out.reshape(-1)[k] = _concat_two(ctx, x, y, k)
    return out


@kernel("TensorListPushBackBatch")
def _push_back_batch_kernel(ctx, handles, tensor):
    lists = _as_batch(handles)
    if lists.ndim != 1:
        _fail(ctx, "Expected input_handles to be a vector, but saw shape: %s"
              % dims_str(lists.shape))
    a = _rows(ctx, tensor, "Expected tensor to be at least a vector, but saw shape: %s")
    if a.shape[0] != lists.shape[0]:
        _fail(ctx, "Expected tensor.shape[0] == input_handles.size, but saw %d vs. %d"
              % (a.shape[0], lists.shape[0]))
    want = ctx.attrs["element_dtype"]
    out = np.empty(lists.shape, dtype=object)
    for b, (lst, row) in enumerate(zip(lists, a)):
        if type(lst) is not TensorList:
            _fail(ctx, "Input handle at index %d is not a list. Saw: '%s'" % (b, lst))
        if not compatible(lst.element_shape, row.shape):
            _fail(ctx, "Tried to append a tensor with incompatible shape to a list at index "
                  "%d. Op element shape: %s list shape: %s"
                  % (b, dims_str(row.shape), dims_str(lst.element_shape)))
        if lst.element_dtype is not want:
            _fail(ctx, "Invalid data type at index %d; op elements %s but list elements %s"
                  % (b, _dt.type_string(want), _dt.type_string(lst.element_dtype)))
        out[b] = lst.replace(lst.tensors + (row,))
    return out
