"""A GraphDef's function library (TF's `FunctionDefLibrary`), as the importer uses it.

TF 2.x writes tf.cond / tf.while_loop as functional ops (If, While, ...) and tf.function
calls as (Stateful)PartitionedCall ops whose branches, bodies and callees are
FunctionDefs in the GraphDef's library. `FunctionDef` holds one of them decoded: its
signature (typed input and output args), its body (NodeDefs with decoded attrs; an attr
that stands for one of the caller's attrs, TF's "$T", is an `AttrPlaceholder`), the
`ret` map (output arg -> the body tensor it returns) and `control_ret` (the stateful
body nodes the call must run). framework/graph_def_proto.py decodes them.

`instantiate` turns a FunctionDef into what the importer reads: body nodes whose data
inputs are "node:i" or "node" (TF writes "node:output_arg:index" inside functions),
input args by name, placeholders bound to the caller's attrs.
framework/functional_lowering.py imports such bodies in place of the functional ops.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework import serialize as _ser
from tensorweave.framework.shapes import TensorShape

# The functional ops: the output arg (a list, the only one) of each
FUNCTIONAL_OPS = {
    "If": "output", "StatelessIf": "output", "While": "output", "StatelessWhile": "output",
    "Case": "output", "StatelessCase": "output", "PartitionedCall": "output",
    "StatefulPartitionedCall": "output",
}


class AttrPlaceholder:
    """A function body's attr that takes the value of the caller's attr `name` ("$T")."""

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, AttrPlaceholder) and other.name == self.name

    def __repr__(self):
        return "AttrPlaceholder(%r)" % self.name


class ArgDef:
    """One input or output arg of a function signature (TF's `OpDef.ArgDef`)."""

    def __init__(self, name: str, dtype: Optional[_dt.DType] = None, type_attr: str = "",
                 number_attr: str = "", type_list_attr: str = ""):
        self.name = name
        self.dtype = dtype
        self.type_attr = type_attr
        self.number_attr = number_attr
        self.type_list_attr = type_list_attr

    @property
    def is_list(self) -> bool:
        return bool(self.number_attr or self.type_list_attr)


class FunctionDef:
    """One decoded FunctionDef (see the module docstring).

    `nodes` may be given as a function returning them: the body is then decoded when
    first read (a GraphDef's library often holds functions no node calls: TF 2.x keeps
    a loop's forward functions next to the rewritten ones its gradient calls).
    """

    def __init__(self, name: str, input_args: List[ArgDef], output_args: List[ArgDef],
                 nodes: Union[List["_ser.NodeDef"], Callable[[], List["_ser.NodeDef"]]],
                 ret: Dict[str, str], control_ret: Optional[Dict[str, str]] = None,
                 attr: Optional[Dict[str, Any]] = None):
        self.name = name
        self.input_args = input_args
        self.output_args = output_args
        self._nodes = nodes
        self.ret = dict(ret)
        self.control_ret = dict(control_ret or {})
        self.attr = dict(attr or {})

    @property
    def nodes(self) -> List["_ser.NodeDef"]:
        """The body's NodeDefs (decoded on first read when given as a function)."""
        if callable(self._nodes):
            self._nodes = self._nodes()
        return self._nodes

    @nodes.setter
    def nodes(self, nodes: List["_ser.NodeDef"]) -> None:
        self._nodes = nodes

    def __repr__(self):
        return "<FunctionDef %s(%s) -> (%s)>" % (
            self.name, ", ".join(a.name for a in self.input_args),
            ", ".join(a.name for a in self.output_args))


class Instance:
    """A FunctionDef bound to a caller's attrs, in the importer's notation.

    Attributes:
      nodes: the body NodeDefs, data inputs as "node:i" ("node" for output 0) or an
        input arg's name.
      arg_names: the input args' names, in signature order.
      outputs: for each output arg, (body node, output index), or (input arg, None).
      control_outputs: the body nodes the call must run (its control_ret).
    """

    def __init__(self, nodes, arg_names, outputs, control_outputs):
        self.nodes = nodes
        self.arg_names = arg_names
        self.outputs = outputs
        self.control_outputs = control_outputs


class FunctionLibrary:
    """The FunctionDefs of one GraphDef, by name."""

    def __init__(self, functions: Optional[List[FunctionDef]] = None):
        self.functions: Dict[str, FunctionDef] = {f.name: f for f in functions or []}

    def __contains__(self, name) -> bool:
        return name in self.functions

    def __len__(self) -> int:
        return len(self.functions)

    def lookup(self, name: str, node: str) -> FunctionDef:
        """The function `name` that node `node` calls.

        Raises:
          InvalidArgumentError: no such function (TF's class: its runtime finds no op or
            function of that name when it lowers the node).
        """
        fdef = self.functions.get(name)
        if fdef is None:
            from tensorweave.framework import errors
            raise errors.InvalidArgumentError(
                None, None, "Function '%s' called by node '%s' is not in the GraphDef's "
                "function library (it holds: %s)"
                % (name, node, ", ".join(sorted(self.functions)) or "nothing"))
        return fdef


# --- instantiation -----------------------------------------------------------------------
def instantiate(fdef: FunctionDef, bindings: Dict[str, Any],
                library: FunctionLibrary) -> Instance:
    """`fdef` with its placeholders bound to `bindings` (the caller's attrs) and its
    inputs in the importer's notation.

    Raises:
      ValueError: a placeholder has no binding, or a list-typed arg (not supported).
    """
    for arg in fdef.input_args + fdef.output_args:
        if arg.is_list:
            raise ValueError("Function '%s': list-typed arg '%s' is not supported by "
                             "tensorweave's import of function libraries"
                             % (fdef.name, arg.name))
    nodes = [_ser.NodeDef(n.name, n.op, None, n.device,
                          {k: v if type(v) in _PLAIN_ATTR_TYPES else
                           _bound(v, bindings, fdef.name, k) for k, v in n.attr.items()})
             for n in fdef.nodes]
    offsets = {n.name: _output_offsets(n, library) for n in nodes}
    args = {a.name for a in fdef.input_args}
    for n, template in zip(nodes, fdef.nodes):
        n.input = [_flat_input(s, offsets, args, fdef.name, n.name) for s in template.input]
    outputs = []
    for arg in fdef.output_args:
        ref = fdef.ret.get(arg.name)
        if ref is None:
            raise ValueError("Function '%s' returns nothing for its output '%s'"
                             % (fdef.name, arg.name))
        src, index = _ser.parse_input(_flat_input(ref, offsets, args, fdef.name, arg.name))
        outputs.append((src, None if src in args else index))
    controls = [fdef.control_ret[k] for k in sorted(fdef.control_ret)]
    return Instance(nodes, [a.name for a in fdef.input_args], outputs, controls)


# attr values that never refer to the caller's attrs (most of them): kept as they are
_PLAIN_ATTR_TYPES = frozenset((bool, int, float, str, bytes, np.ndarray, _dt.DType,
                               TensorShape))


def _bound(value, bindings: Dict[str, Any], function: str, key: str):
    """`value` with every AttrPlaceholder replaced by the caller's attr it names."""
    if isinstance(value, AttrPlaceholder):
        if value.name not in bindings:
            raise ValueError("Function '%s': attr '%s' refers to the caller's attr '$%s', "
                             "which the call does not set" % (function, key, value.name))
        return bindings[value.name]
    if isinstance(value, list):
        return [_bound(v, bindings, function, key) for v in value]
    attr = getattr(value, "attr", None)  # a function-valued attr (graph_def_proto.FuncAttr)
    if isinstance(attr, dict) and any(isinstance(v, AttrPlaceholder) for v in attr.values()):
        value = type(value)(value.name, {k: _bound(v, bindings, function, key)
                                         for k, v in attr.items()})
    return value


def _output_offsets(node: "_ser.NodeDef", library: FunctionLibrary) -> Dict[str, int]:
    """{output arg name: index of its first flat output} of a body node."""
    if node.op in FUNCTIONAL_OPS:
        return {FUNCTIONAL_OPS[node.op]: 0}
    if node.op in library:
        fdef = library.lookup(node.op, node.name)
        return {a.name: i for i, a in enumerate(fdef.output_args)}
    op_def = _ser.registered_op_def(node)
    fixed = _FIXED_OFFSETS.get(op_def)
    if fixed is not None:
        return fixed
    if not any(spec.is_list for spec in op_def.outputs):  # the same for every node
        fixed = {spec.name: i for i, spec in enumerate(op_def.outputs)}
        _FIXED_OFFSETS[op_def] = fixed
        return fixed
    offsets, start = {}, 0
    for spec in op_def.outputs:
        offsets[spec.name] = start
        start += _arg_length(spec, node, op_def)
    return offsets


# OpDef -> its output offsets, for ops without list outputs (read-only dicts)
_FIXED_OFFSETS: Dict[Any, Dict[str, int]] = {}


def _arg_length(spec, node: "_ser.NodeDef", op_def) -> int:
    """How many flat outputs the output arg `spec` of `node` has."""
    if not spec.is_list:
        return 1
    key = spec.number_attr or spec.type_list_attr
    value = node.attr.get(key)
    if value is None:
        default = op_def.attrs.get(key)
        value = default.default if isinstance(default, _reg.TypeListAttr) else default
    if value is None or value is _reg.REQUIRED:
        raise ValueError("Node '%s' (op %s) has no attr '%s' giving the length of its "
                         "output '%s'" % (node.name, node.op, key, spec.name))
    return value if spec.number_attr else len(value)


def _flat_input(ref: str, offsets: Dict[str, Dict[str, int]], args: set,
                function: str, user: str) -> str:
    """A body input reference in the importer's notation: "node:output_arg:index"
    becomes "node:<flat index>" ("node" for output 0, which the importer reads the
    quickest); args and control inputs stay as they are."""
    if ref.startswith("^") or ref in args:
        return ref
    parts = ref.split(":")
    if len(parts) == 3 and parts[0] in offsets and parts[2].isdigit():
        node, arg, index = parts
        start = offsets[node].get(arg)
        if start is not None:
            flat = start + int(index)
            return "%s:%d" % (node, flat) if flat else node
    raise ValueError("Function '%s': '%s' (used by '%s') names no input arg nor output of "
                     "a node of the function" % (function, ref, user))
