"""Private ops lowered to TensorFlow's standard ops, for the GraphDefs TensorFlow reads.

A few ops that tensorweave builds have a private type ("_AssertCompare", ...): one fused
kernel does what TF builds from several standard ops. TensorFlow does not know these
types (`NotFoundError: Op type not registered '_AssertCompare'`), so every GraphDef
written for TF (`graph_def_proto.graph_to_proto` / `graph_def_to_proto`, and through
them `Graph.as_graph_def`, `tf.train.write_graph`, `export_meta_graph`, SavedModels,
`convert_variables_to_constants`, event files) passes through `lower_private_ops`,
which replaces each private node by the subgraph TF itself builds for it:

    _AssertCompare  x OP y -> All over all axes -> Assert(condition, data)   (check_ops)
    _AssertNear     |x - y| <= atol + rtol * |y| -> All -> Assert
    _AssertRank     Rank(x) ==, >= or in the ranks -> Assert, data with Shape(x)
    _ReadVariableOrDefault  cond(VarIsInitializedOp, ReadVariableOp, default) as TF1's
                    cond builds it: Switch / Identity pivots / Merge(false, true)

The node that keeps the private node's name is the one other nodes refer to (the
Assert; the Merge, whose output 0 is the value), so "name", "name:0" and "^name" keep
their meaning; the helpers are named under it ("name/Equal", "name/All", ...), made
unique against the graph's names. The private node's control inputs go where they
keep their meaning (the Assert; the VarIsInitializedOp that starts the cond), its
device to every node, its "_class" colocation to the named node. A helper Const takes
a control input from a helper computed from the node's data, so it runs in that
data's frame (a while loop's body, a cond branch) as TF's pivots make it.

tensorweave imports the lowered form as ordinary ops with the same results (including
the failing asserts' messages). Graphs built and run inside tensorweave keep the
private ops and their fused kernels: the lowering changes only the written form, and
the writers that feed tensorweave itself (partition graphs, the distributed master,
input worker processes) skip it. The readable JSON form (serialize.py) is not lowered.

`NOT_LOWERED` lists the private ops with no reasonable standard-op form; a graph
holding one is written as it is (with a warning): TensorFlow cannot load it.

A TF1 reference variable is a VarHandleOp here (marked REF_VARIABLE_ATTR) whose read
keeps TF1's name "v/read". TensorFlow's tooling takes every VarHandleOp for a resource
variable and fetches its read by the name TF gives it ("v/Read/ReadVariableOp":
`convert_variables_to_constants`, and so freeze_graph, on a session that loaded our meta
graph or SavedModel), so the written form adds that read next to each such handle.
"""
from __future__ import annotations

import logging
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework import serialize as _ser
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
from tensorweave.framework.shapes import TensorShape, broadcast_shapes

_log = logging.getLogger("tensorflow")

# (node name, output index) -> the output's static shape, None when not known
ShapeOf = Callable[[str, int], Optional[TensorShape]]

NOT_LOWERED = {
    "_BatchedNonMaxSuppressionPadded":
        "TF builds batched padded NMS as a Python composite of nested tiled while loops; "
        "no standard op computes the same (NonMaxSuppressionV4/V5 and "
        "CombinedNonMaxSuppression differ in IoU threshold test, score zeroing and "
        "corner handling)",
    "_Send": "runtime only: partition graphs (never lowered)",
    "_Recv": "runtime only: partition graphs (never lowered)",
}

# private ops TensorFlow registers itself: written as they are, and TF loads them
TF_OWN_PRIVATE = {
    "_FusedConv2D": "Grappler's remapper makes it (Conv2D + BiasAdd [+ Relu]); TF has the "
                    "op and its CPU kernel",
    "_FusedConv3D": "Grappler's remapper makes it (Conv3D + BiasAdd [+ Relu]); TF has the "
                    "op and its CPU kernel",
    "_FusedBatchNormEx": "Grappler's remapper makes it (FusedBatchNormV3 + Relu); TF has "
                         "the op and its CPU kernel",
}

_SCALAR = TensorShape([])
_UNKNOWN = TensorShape(None)
_warned: set = set()  # the NOT_LOWERED op types already warned about


def lower_private_ops(graph_def: "_ser.GraphDef", shape_of: Optional[ShapeOf] = None,
                      reserved: Iterable[str] = ()) -> "_ser.GraphDef":
    """`graph_def` with each private node replaced by standard TF ops, and TF's read
    added next to each reference variable's handle (see the module docstring);
    `graph_def` itself when there is nothing to do. A pure function, but for the
    warning logged once per NOT_LOWERED op type it meets.

    Args:
      graph_def: our GraphDef (decoded attrs).
      shape_of: static shapes of the outputs (e.g. from the Graph); otherwise they come
        from the nodes' "_output_shapes" attrs and Const values. Unknown shapes give the
        run-time form (Rank + Range instead of a constant list of axes).
      reserved: further names the helper nodes must not take (the graph's other nodes
        when `graph_def` holds only some of them).
    """
    taken = {nd.name for nd in graph_def.node}.union(reserved)
    unread = {nd.name for nd in graph_def.node if _lacks_tf_read(nd, taken)}
    if not unread and not any(nd.op in _RULES or nd.op in NOT_LOWERED
                              for nd in graph_def.node):
        return graph_def
    names = _ser.UniqueNames(taken.union(_tf_read_name(n) for n in unread))
    shapes = _Shapes(graph_def, shape_of)
    out: List[_ser.NodeDef] = []
    for nd in graph_def.node:
        rule = _RULES.get(nd.op)
        if nd.name in unread:
            out.extend((nd, _tf_read_of(nd)))
            continue
        if rule is None:
            if nd.op in NOT_LOWERED and nd.op not in _warned:
                _warned.add(nd.op)
                _log.warning("Node '%s' has the private op type %s, which has no standard "
                             "TensorFlow form (%s); TensorFlow cannot load this graph",
                             nd.name, nd.op, NOT_LOWERED[nd.op])
            out.append(nd)
            continue
        b = _Builder(nd, names, shapes)
        rule(b)
        out.extend(b.nodes)
    return _ser.GraphDef(out, graph_def.versions)


def _tf_read_name(handle_name: str) -> str:
    return handle_name + "/Read/ReadVariableOp"


def _lacks_tf_read(nd: "_ser.NodeDef", taken) -> bool:
    """Whether `nd` is a reference variable's handle with no read named as TF names a
    resource variable's."""
    return nd.op == "VarHandleOp" and bool(nd.attr.get(REF_VARIABLE_ATTR)) and \
        _tf_read_name(nd.name) not in taken


def _tf_read_of(handle: "_ser.NodeDef") -> "_ser.NodeDef":
    """The read TF's ResourceVariable makes of its handle: "v/Read/ReadVariableOp", on
    the handle's device."""
    attrs = {"dtype": handle.attr["dtype"]}
    if "_output_shapes" in handle.attr:
        attrs["_output_shapes"] = [handle.attr["shape"]]
    return _ser.NodeDef(_tf_read_name(handle.name), "ReadVariableOp", [handle.name],
                        handle.device, attrs)


def lowered_op_types() -> frozenset:
    """The private op types `lower_private_ops` replaces."""
    return frozenset(_RULES)


# --- names and shapes --------------------------------------------------------------------
class _Shapes:
    """Static shapes of the GraphDef's tensors (unknown when nothing says)."""

    def __init__(self, graph_def: "_ser.GraphDef", shape_of: Optional[ShapeOf]):
        self._nodes = {nd.name: nd for nd in graph_def.node}
        self._shape_of = shape_of

    def __call__(self, ref: str) -> TensorShape:
        name, idx = _ser.parse_input(ref)
        if self._shape_of is not None:
            try:
                shape = self._shape_of(name, idx)
            except (KeyError, IndexError):
                shape = None
            if shape is not None:
                return shape
        nd = self._nodes.get(name)
        if nd is None:
            return _UNKNOWN
        listed = nd.attr.get("_output_shapes")
        if listed and idx < len(listed) and isinstance(listed[idx], TensorShape):
            return listed[idx]
        if nd.op == "Const" and idx == 0 and nd.attr.get("value") is not None:
            return TensorShape(list(np.shape(nd.attr["value"])))
        return _UNKNOWN


def _broadcast(*shapes: TensorShape) -> TensorShape:
    out = shapes[0]
    for s in shapes[1:]:
        try:
            out = broadcast_shapes(out, s)
        except ValueError:  # fails at run time, with the kernel's error
            return _UNKNOWN
    return out


class _Builder:
    """Emits the nodes that replace one private node: the helpers, named under it, then
    the node that keeps its name."""

    def __init__(self, node: "_ser.NodeDef", names: _ser.UniqueNames, shapes: _Shapes):
        self.node = node
        self.data = [s for s in node.input if not s.startswith("^")]
        self.controls = [s for s in node.input if s.startswith("^")]
        self.shape = shapes
        self.nodes: List[_ser.NodeDef] = []
        self._names = names
        self._with_shapes = "_output_shapes" in node.attr
        self._defaults = _reg.get_op_def(node.op).attrs

    def attr(self, key: str):
        """The node's attr, or the op's default (export_meta_graph may strip those)."""
        if key in self.node.attr:
            return self.node.attr[key]
        default = self._defaults[key]
        return default.default if isinstance(default, (_reg.TypeAttr,
                                                        _reg.TypeListAttr)) else default

    def out_shape(self, index: int) -> TensorShape:
        return self.shape("%s:%d" % (self.node.name, index))

    def _emit(self, name: str, op: str, inputs: Sequence[str], attrs: dict,
              shapes: Sequence[TensorShape]) -> str:
        attrs = dict(attrs)
        if self._with_shapes:
            attrs["_output_shapes"] = list(shapes)
        self.nodes.append(_ser.NodeDef(name, op, list(inputs), self.node.device, attrs))
        return name

    def helper(self, base: str, op: str, inputs: Sequence[str], attrs: dict,
               shapes: Sequence[TensorShape]) -> str:
        """A helper node "<node>/<base>" (made unique); returns its name."""
        return self._emit(self._names.fresh(self.node.name + "/" + base), op, inputs,
                          attrs, shapes)

    def const(self, base: str, value, after: str) -> str:
        """A Const helper holding `value`, run after the helper `after` (so in its frame)."""
        value = np.asarray(value, dtype=object if isinstance(value, bytes) else None)
        dtype = _dt.string if value.dtype == object else _dt.as_dtype(value.dtype)
        return self.helper(base, "Const", ["^" + after], {"dtype": dtype, "value": value},
                           [TensorShape(list(value.shape))])

    def final(self, op: str, inputs: Sequence[str], attrs: dict,
              shapes: Sequence[TensorShape], controls: Sequence[str] = ()) -> str:
        """The node that keeps the private node's name (and its colocation)."""
        attrs = dict(attrs)
        if "_class" in self.node.attr:
            attrs["_class"] = self.node.attr["_class"]
        return self._emit(self.node.name, op, list(inputs) + list(controls), attrs, shapes)

    # --- what TF's check_ops builds ---
    def reduce_all(self, test: str, shape: TensorShape) -> str:
        """All(test) over every axis, as math_ops.reduce_all(axis=None): a constant list
        of axes when the rank is known (and not 0), else Range(0, Rank(test), 1)."""
        if shape.ndims:
            axes = self.const("Const", np.arange(shape.ndims, dtype=np.int32), after=test)
        else:
            rank = self.helper("Rank", "Rank", [test], {"T": _dt.bool}, [_SCALAR])
            start = self.const("range/start", np.int32(0), after=rank)
            delta = self.const("range/delta", np.int32(1), after=rank)
            axes = self.helper("range", "Range", [start, rank, delta], {"Tidx": _dt.int32},
                               [TensorShape([shape.ndims])])
        return self.helper("All", "All", [test, axes],
                           {"Tidx": _dt.int32, "keep_dims": False}, [_SCALAR])

    def assert_op(self, condition: str, data: Sequence[str], tdata: Sequence[_dt.DType],
                  controls: Sequence[str] = ()) -> str:
        """The Assert that keeps the node's name (control_flow_assert.Assert without the
        AssertGuard cond, which TF adds only to avoid copying data to the host)."""
        return self.final("Assert", [condition] + list(data),
                          {"T": list(tdata), "summarize": self.attr("summarize")}, [],
                          list(controls) + self.controls)


# --- the rules ---------------------------------------------------------------------------
_COMPARE_OPS = {"equal": "Equal", "not_equal": "NotEqual", "less": "Less",
                "less_equal": "LessEqual", "greater": "Greater",
                "greater_equal": "GreaterEqual"}


def _compare(b: _Builder, op: str, x: str, y: str, dtype: _dt.DType,
             shape: TensorShape, scope: str = "") -> str:
    attrs = {"T": dtype}
    if op in ("Equal", "NotEqual"):
        attrs["incompatible_shape_error"] = True
    return b.helper(scope + op, op, [x, y], attrs, [shape])


def _lower_assert_compare(b: _Builder) -> None:
    """check_ops._binary_assert: Assert(reduce_all(x OP y), data)."""
    x, y = b.data[:2]
    shape = _broadcast(b.shape(x), b.shape(y))
    test = _compare(b, _COMPARE_OPS[b.attr("comparison")], x, y, b.attr("T"), shape)
    b.assert_op(b.reduce_all(test, shape), b.data[2:], b.attr("Tdata"))


def _lower_assert_near(b: _Builder) -> None:
    """check_ops.assert_near: Assert(reduce_all(|x - y| <= atol + rtol * |y|), data),
    with <= as the kernel and TF's documentation (TF's code uses <)."""
    x, y, rtol, atol = b.data[:4]
    dtype = b.attr("T")
    real = dtype.real_dtype if dtype.is_complex else dtype
    shape_x, shape_y = b.shape(x), b.shape(y)

    def absolute(t: str, shape: TensorShape) -> str:
        if dtype.is_complex:  # math_ops.abs of a complex tensor
            return b.helper("Abs", "ComplexAbs", [t], {"T": dtype, "Tout": real}, [shape])
        return b.helper("Abs", "Abs", [t], {"T": dtype}, [shape])

    if dtype.is_complex:  # the tolerances are real numbers, as in TF
        rtol = b.helper("Real", "Real", [rtol], {"T": dtype, "Tout": real}, [b.shape(rtol)])
        atol = b.helper("Real", "Real", [atol], {"T": dtype, "Tout": real}, [b.shape(atol)])
    diff_shape = _broadcast(shape_x, shape_y)
    diff = b.helper("sub", "Sub", [x, y], {"T": dtype}, [diff_shape])
    abs_diff = absolute(diff, diff_shape)
    scaled_shape = _broadcast(b.shape(rtol), shape_y)
    scaled = b.helper("mul", "Mul", [rtol, absolute(y, shape_y)], {"T": real},
                      [scaled_shape])
    tol_shape = _broadcast(b.shape(atol), scaled_shape)
    tol = b.helper("add", "AddV2", [atol, scaled], {"T": real}, [tol_shape])
    shape = _broadcast(diff_shape, tol_shape)
    test = b.helper("LessEqual", "LessEqual", [abs_diff, tol], {"T": real}, [shape])
    b.assert_op(b.reduce_all(test, shape), b.data[4:], b.attr("Tdata"))


def _rank_is_scalar(b: _Builder, rank: str) -> str:
    """check_ops' assert_rank(rank, 0) for a rank of unknown shape: the Assert's name."""
    have = b.helper("rank_is_scalar/Rank", "Rank", [rank], {"T": _dt.int32}, [_SCALAR])
    zero = b.const("rank_is_scalar/Const", np.int32(0), after=have)
    test = _compare(b, "Equal", have, zero, _dt.int32, _SCALAR, "rank_is_scalar/")
    message = b.const("rank_is_scalar/data_0", b"Rank must be a scalar. Received rank: ",
                      after=have)
    return b.helper("rank_is_scalar/Assert", "Assert", [test, message, rank],
                    {"T": [_dt.string, _dt.int32], "summarize": b.attr("summarize")}, [])


def _lower_assert_rank(b: _Builder) -> None:
    """check_ops' _assert_rank_condition / _assert_ranks_condition: Assert(Rank(x) ==
    rank, >= rank, or == any of the ranks, data), after checking that each rank of
    unknown shape is a scalar; the data gets Shape(x) at `shape_index`."""
    n = b.attr("N")
    x, ranks, data = b.data[0], b.data[1:1 + n], list(b.data[1 + n:])
    tdata = list(b.attr("Tdata"))
    mode = b.attr("mode")
    have = b.helper("Rank", "Rank", [x], {"T": b.attr("T")}, [_SCALAR])
    checks = ["^" + _rank_is_scalar(b, r) for r in ranks if b.shape(r).ndims != 0]
    if mode == "at_least":
        condition = _compare(b, "GreaterEqual", have, ranks[0], _dt.int32,
                             _broadcast(_SCALAR, b.shape(ranks[0])))
    elif mode == "equal":
        condition = _compare(b, "Equal", have, ranks[0], _dt.int32,
                             _broadcast(_SCALAR, b.shape(ranks[0])))
    elif not ranks:
        condition = b.const("Const", np.bool_(False), after=have)
    else:
        condition = None
        for r in ranks:
            shape = _broadcast(_SCALAR, b.shape(r))
            test = _compare(b, "Equal", r, have, _dt.int32, shape)
            condition = test if condition is None else b.helper(
                "LogicalOr", "LogicalOr", [condition, test], {}, [shape])
    index = b.attr("shape_index")
    if index >= 0:
        shape_x = b.shape(x)
        data.insert(index, b.helper("Shape", "Shape", [x],
                                    {"T": b.attr("T"), "out_type": _dt.int32},
                                    [TensorShape([shape_x.ndims])]))
        tdata.insert(index, _dt.int32)
    b.assert_op(condition, data, tdata, checks)


def _lower_read_or_default(b: _Builder) -> None:
    """Variable.initialized_value(): TF1's cond(is_variable_initialized(v), v.read_value,
    lambda: initial_value) in cond_v1's form; the Merge keeps the node's name."""
    handle, default = b.data
    dtype = b.attr("dtype")
    shape = b.out_shape(0)
    pred = b.helper("VarIsInitializedOp", "VarIsInitializedOp", [handle] + b.controls, {},
                    [_SCALAR])
    switch = b.helper("Switch", "Switch", [pred, pred], {"T": _dt.bool}, [_SCALAR] * 2)
    b.helper("switch_t", "Identity", [switch + ":1"], {"T": _dt.bool}, [_SCALAR])
    b.helper("switch_f", "Identity", [switch], {"T": _dt.bool}, [_SCALAR])
    pred_id = b.helper("pred_id", "Identity", [pred], {"T": _dt.bool}, [_SCALAR])
    handle_switch = b.helper("Read/ReadVariableOp/Switch", "Switch", [handle, pred_id],
                             {"T": _dt.resource, "_class": ["loc:@" + _ser.parse_input(handle)[0]]},
                             [_SCALAR] * 2)
    read = b.helper("Read/ReadVariableOp", "ReadVariableOp", [handle_switch + ":1"],
                    {"dtype": dtype}, [shape])
    true_value = b.helper("Identity", "Identity", [read], {"T": dtype}, [shape])
    default_shape = b.shape(default)
    false_value = b.helper("Switch_1", "Switch", [default, pred_id], {"T": dtype},
                           [default_shape] * 2)
    b.final("Merge", [false_value, true_value], {"T": dtype, "N": 2}, [shape, _SCALAR])


def _lower_count_true(b: _Builder) -> None:
    """The Cast of bool and the Sum that runtime/optimizer.fuse_count_true made one
    _CountTrue node of (partition graphs show it); the Sum keeps the node's name."""
    x, axes = b.data
    dtype = b.attr("T")
    cast = b.helper("Cast", "Cast", [x], {"SrcT": _dt.bool, "DstT": dtype, "Truncate": False},
                    [b.shape(x)])
    b.final("Sum", [cast, axes], {"T": dtype, "Tidx": b.attr("Tidx"),
                                  "keep_dims": b.attr("keep_dims")},
            [b.out_shape(0)], b.controls)


_RULES: Dict[str, Callable[[_Builder], None]] = {
    "_CountTrue": _lower_count_true,
    "_AssertCompare": _lower_assert_compare,
    "_AssertNear": _lower_assert_near,
    "_AssertRank": _lower_assert_rank,
    "_ReadVariableOrDefault": _lower_read_or_default,
}
