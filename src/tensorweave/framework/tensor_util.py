"""Build-time values of tensors, for shape functions (TF1 `tf.get_static_value`).

`constant_value` is what TF's graph-level shape inference can evaluate
(`EvaluateConstantTensor`): a registered rule of the op (Const, Shape of a known shape,
Pack, ...), one dimension of a partly known shape (`tf.shape(x)[i]`), or else the op's
own kernel run on its inputs' values when they are all known and small.
`constant_value_as_shape` is TF's `ConstantPartialShape`: the partial shape a 1-D shape
tensor describes, with unknown entries where only part of it is known.
"""
from __future__ import annotations

import weakref
from typing import Callable, Dict, Optional

import numpy as np

from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Tensor
from tensorweave.framework.shapes import TensorShape, unknown_shape

# op type -> fn(op) returning the constant value of output 0 or None. Op families add
# rows for ops whose value is known at build time (Shape of a known shape, Pack, ...).
# A row is the last word on its op: ops without one are evaluated by their kernel.
_STATIC_VALUE: Dict[str, Callable] = {}

# Kernels run at build time only on this many elements per input and output (TF runs
# any constant subgraph; the cap keeps graph building cheap -- shapes are small).
_MAX_EVALUATED_ELEMENTS = 1024

# Ops never evaluated at build time, as TF's shape inference never folds them: fed or
# control-flow values, side effects, and user Python.
_NEVER_EVALUATED = frozenset({
    "Placeholder", "PlaceholderWithDefault", "NoOp", "Print", "PrintV2", "Assert",
    "CheckNumerics", "PyFuncStateless", "Switch", "Merge", "Enter", "Exit",
    "NextIteration", "LoopCond", "RefSwitch", "RefMerge", "RefEnter", "RefNextIteration",
    "ControlTrigger"})


# Small values found so far (copies), as TF's shape refiner keeps them: a value once
# known stays known (a stateless op of known inputs; a shape once fully known), so a
# chain or a DAG of shape arithmetic is evaluated once, not once per path through it.
# Unknown values are not kept: a later set_shape may make them known.
_KNOWN: "weakref.WeakKeyDictionary[Tensor, np.ndarray]" = weakref.WeakKeyDictionary()


def register_static_value(op_type: str):
    def deco(fn):
        _STATIC_VALUE[op_type] = fn
        return fn
    return deco


def constant_value(tensor, partial: bool = False) -> Optional[np.ndarray]:
    """The value of `tensor` if it can be computed at graph-build time, else None; with
    `partial`, a stacked value comes back with None for the entries not known."""
    if not isinstance(tensor, Tensor):
        if isinstance(tensor, (np.ndarray, np.generic, int, float, list, tuple)):
            return np.asarray(tensor)
        return None
    op = tensor.op
    v = _KNOWN.get(tensor)
    if v is not None:
        return v.copy()  # callers may write to what they get
    try:
        v = _dim_of_shape(op, tensor.value_index)
        if v is None:
            fn = _STATIC_VALUE.get(op.type)
            v = _kernel_value(tensor) if fn is None else fn(op, tensor.value_index)
    except (ValueError, TypeError, IndexError, RecursionError):
        return None
    if v is None and partial and op.type == "Pack" and op._get_attr("axis") == 0:
        return _partial_pack_value(op)
    if v is not None and op.type != "Const" and np.size(v) <= _MAX_EVALUATED_ELEMENTS:
        _KNOWN[tensor] = np.array(v)
    return v


def _partial_pack_value(op) -> np.ndarray:
    """TF's partial value of a Pack: an object array holding None for each entry not
    known at build time (`tf.pad` reads its paddings so)."""
    return np.array([constant_value(t, partial=True) for t in op.inputs], dtype=object)


get_static_value = constant_value


def _dim_of_shape(op, index) -> Optional[np.ndarray]:
    """`tf.shape(x)[i]` or `tf.unstack(tf.shape(x))[i]` where dimension i of x is known
    though x's shape is not fully known (TF's TryInferFromShapes); else None. The index
    must be a Const, as TF requires."""
    if op.type == "StridedSlice":
        attrs = op._attrs
        if attrs["shrink_axis_mask"] != 1 or attrs["begin_mask"] or attrs["end_mask"] or \
                attrs["ellipsis_mask"] or attrs["new_axis_mask"]:
            return None
        begin = op.inputs[1].op
        if begin.type != "Const" or np.size(begin._get_attr("value")) != 1:
            return None
        ix = int(np.asarray(begin._get_attr("value")).reshape(-1)[0])
    elif op.type == "Unpack":
        if op._get_attr("axis") != 0:
            return None
        ix = index
    else:
        return None
    source = op.inputs[0].op
    if source.type != "Shape":
        return None
    dims = source.inputs[0].shape
    if dims.ndims is None or not -dims.ndims <= ix < dims.ndims or dims[ix].value is None:
        return None
    return np.asarray(dims[ix].value, dtype=op.outputs[index].dtype.as_numpy_dtype)


def _small(tensor: Tensor) -> bool:
    """Whether a kernel may run on `tensor` at build time: a fully known, small shape and
    a numeric or bool dtype (strings, resources and variants are never shapes)."""
    n = tensor.shape.num_elements()
    dtype = tensor.dtype.base_dtype
    return n is not None and n <= _MAX_EVALUATED_ELEMENTS and dtype.size > 0 and \
        dtype.is_numpy_compatible


class _BuildTimeContext:
    """What a kernel sees when it runs at build time: its op and attrs and NumPy. There
    is no device, resource manager or session; a kernel that needs one fails, and the
    value stays unknown."""

    __slots__ = ("op", "attrs", "xp", "node_name", "device", "resources", "session",
                 "state")

    def __init__(self, op):
        self.op, self.attrs, self.xp, self.node_name = op, op._attrs, np, op.name
        self.device = self.resources = self.session = None
        self.state = {}


def _kernel_value(tensor: Tensor) -> Optional[np.ndarray]:
    """Output `tensor` of a stateless op whose inputs are all known and small, by running
    its CPU kernel (TF's shape inference folds constant subgraphs the same way)."""
    op = tensor.op
    op_def = op._op_def
    if op_def is None or op_def.stateful or not op.inputs or \
            op.type in _NEVER_EVALUATED or not _small(tensor) or \
            not all(_small(t) for t in op.inputs) or not _reg.has_kernel(op.type, "CPU"):
        return None
    kd = _reg.get_kernel(op.type, "CPU")
    if kd.is_async:
        return None
    values = []
    for t in op.inputs:
        v = constant_value(t)
        if v is None:
            return None
        values.append(np.asarray(v))
    try:
        with np.errstate(all="ignore"):
            out = kd.fn(_BuildTimeContext(op), *values)
    except Exception:  # noqa: BLE001 -- as TF, best effort: the run will report it
        return None
    if not op_def.simple_outputs or len(op.outputs) > 1:
        out = out[tensor.value_index]
    out = np.asarray(out)
    if out.shape != tuple(tensor.shape.as_list()):
        return None
    return out.astype(tensor.dtype.base_dtype.as_numpy_dtype, copy=False)


# --- shapes described by tensors -------------------------------------------------------
def constant_value_as_shape(tensor) -> TensorShape:
    """The shape described by a 1-D int tensor, with unknown entries where its value is
    not known at build time (as TF's tensor_util.constant_value_as_shape and its C++
    shape inference's MakeShapeFromShapeTensor).

    The partial shape comes first; where even its rank is unknown, the tensor's full
    value, else as many unknown dimensions as the vector is long."""
    if not isinstance(tensor, Tensor):
        return TensorShape([None if d is None or d == -1 else int(d)
                            for d in np.asarray(tensor).reshape(-1).tolist()]) \
            if np.ndim(tensor) > 0 else TensorShape([])
    shape = tensor.shape
    if shape.ndims == 0:
        v = constant_value(tensor)
        if v is not None and int(v) == -1:
            return unknown_shape()
        raise ValueError("Shape must be rank 1 but is rank 0")
    out = _partial_shape(tensor)
    if out.ndims is None:
        v = constant_value(tensor)
        if v is not None:
            out = _shape_of_value(v)
    if out.ndims is None and shape.ndims == 1 and shape[0].value is not None:
        out = unknown_shape(shape[0].value)
    return out


def _shape_of_value(v) -> TensorShape:
    return TensorShape([None if d < 0 else int(d) for d in np.asarray(v).reshape(-1).tolist()])


def _partial_shape(tensor: Tensor) -> TensorShape:
    """TF's ConstantPartialShape: what each kind of shape vector says of each entry.
    An unknown rank where nothing is said (constant_value_as_shape then falls back)."""
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    if n == 0:
        return TensorShape([])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "ShapeN":
        return op.inputs[tensor.value_index].shape
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            c = constant_value(t)
            dims.append(None if c is None or np.size(c) != 1 or int(c) < 0 else int(c))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        out = TensorShape([])
        for t in op.inputs[:-1]:
            out = out.concatenate(_partial_shape(t))
        return out
    if op.type == "StridedSlice":
        return _strided_slice_shape(op)
    if op.type == "Cast":
        v = constant_value(tensor)
        if v is not None:
            return _shape_of_value(v)
        pre_cast = _partial_shape(op.inputs[0])
        if pre_cast.ndims is not None and op._get_attr("DstT").base_dtype.name not in (
                "int32", "int64"):
            return unknown_shape(pre_cast.ndims)
        return pre_cast
    v = constant_value(tensor)
    if v is not None:
        return _shape_of_value(v)
    return unknown_shape(n) if n is not None else unknown_shape()


def _strided_slice_shape(op) -> TensorShape:
    """`shape[begin:end:stride]` of a partial shape (TF's PartialStridedSliceShape):
    one-element begin/end/strides known at build time, begin_mask and end_mask 0 or 1,
    no other mask; else an unknown rank. Where TF's Subshape would fail, an unknown rank
    too (and the full value, where known, decides)."""
    attrs = op._attrs
    if attrs["begin_mask"] not in (0, 1) or attrs["end_mask"] not in (0, 1) or \
            attrs["ellipsis_mask"] or attrs["new_axis_mask"] or attrs["shrink_axis_mask"]:
        return unknown_shape()
    if any(t.shape.ndims != 1 or t.shape[0].value != 1 for t in op.inputs[1:]):
        return unknown_shape()
    bounds = []
    for t, masked in zip(op.inputs[1:], (attrs["begin_mask"], attrs["end_mask"], 0)):
        v = None if masked else constant_value(t)
        if not masked and v is None:
            return unknown_shape()
        bounds.append(None if masked else int(np.asarray(v).reshape(-1)[0]))
    begin, end, stride = bounds
    dims = _partial_shape(op.inputs[0])
    if dims.ndims is None:
        return unknown_shape()
    picked = _subshape(dims.ndims, 0 if begin is None else begin, end, stride)
    return unknown_shape() if picked is None else TensorShape([dims[i] for i in picked])


def _subshape(rank: int, start: int, end: Optional[int], stride: int):
    """The dimension indices InferenceContext::Subshape(start, end, stride) picks (end
    None: to the end), or None where it reports an error."""
    if stride == 0:
        return None
    if start == 0 and stride == 1 and (end is None or end >= rank):
        return list(range(rank))
    end = rank if end is None else end
    start, end = min(start, rank), min(end, rank)
    if stride < 0 and start == rank:
        start -= 1
    start = start + rank if start < 0 else start
    end = end + rank if end < 0 else end
    if start < 0 or end < 0 or (stride > 0 and start > end) or (stride < 0 and start < end):
        return None
    return list(range(start, end, stride))
