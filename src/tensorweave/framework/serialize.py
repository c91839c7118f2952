"""GraphDef: a graph as data, and back (`Graph.as_graph_def`, `tf.import_graph_def`).

The wire and disk form is JSON (UTF-8), never pickle. Format, version 1:

    {"format": "tensorweave.GraphDef", "versions": {"producer": 1, "min_consumer": 1},
     "node": [{"name": "x", "op": "Const", "input": ["a:0", "b:1", "^c"],
               "device": "/device:CPU:0", "attr": {"dtype": {"type": "float32"}, ...}}]}

Inputs follow TF's notation: "op:i" for data inputs ("op" alone means "op:0"),
"^op" for control inputs, which come last. Each attr value is a one-key object naming
its kind:

    {"type": "float32"}                    a DType
    {"shape": [2, -1]} / {"shape": null}   a TensorShape (-1: unknown dim, null: rank)
    {"tensor": {"dtype": "float32", "shape": [2], "content": "<base64>"}}
                                           an array: raw little-endian bytes, or for
                                           strings "string_val": [<base64>, ...]
    {"b": true} {"i": 3} {"f": 0.5} {"f": "nan"} {"s": "SAME"} {"bytes": "<base64>"}
    {"list": [<attr value>, ...]}          a list of any of these
    {"none": true}                         an unset optional attr

Colocation constraints are the attr "_class" (["loc:@op"]) as in TF.
"""
from __future__ import annotations

import base64
import contextlib
import gc
import json
import math
from typing import Any, Dict, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.framework.shapes import TensorShape

FORMAT = "tensorweave.GraphDef"
PRODUCER = 1
MIN_CONSUMER = 1


def versions() -> "VersionDef":
    return VersionDef(PRODUCER, MIN_CONSUMER)


class VersionDef:
    def __init__(self, producer: int = PRODUCER, min_consumer: int = MIN_CONSUMER):
        self.producer = producer
        self.min_consumer = min_consumer

    def __repr__(self):
        return "producer: %d\nmin_consumer: %d" % (self.producer, self.min_consumer)


class NodeDef:
    """One node of a GraphDef: name, op type, inputs, device and attrs (decoded values)."""

    def __init__(self, name: str = "", op: str = "", input: Optional[List[str]] = None,  # noqa
                 device: str = "", attr: Optional[Dict[str, Any]] = None):
        self.name = name
        self.op = op
        self.input = list(input or [])
        self.device = device
        self.attr = dict(attr or {})

    def _to_json(self) -> dict:
        d = {"name": self.name, "op": self.op}
        if self.input:
            d["input"] = list(self.input)
        if self.device:
            d["device"] = self.device
        if self.attr:
            d["attr"] = {k: encode_attr(v, self.name, k) for k, v in sorted(self.attr.items())}
        return d

    @classmethod
    def _from_json(cls, d: dict) -> "NodeDef":
        try:
            return cls(d["name"], d["op"], d.get("input", []), d.get("device", ""),
                       {k: decode_attr(v) for k, v in d.get("attr", {}).items()})
        except (KeyError, TypeError) as e:
            raise ValueError("Malformed node in GraphDef: %r (%s)" % (d, e)) from None

    def __eq__(self, other):
        return isinstance(other, NodeDef) and self._to_json() == other._to_json()

    def __repr__(self):
        return json.dumps(self._to_json(), indent=2, sort_keys=True)


class GraphDef:
    """A graph's nodes with decoded attr values: what the importer and the partitioner
    work on, and the readable JSON debug form.

    `SerializeToString()` gives the JSON bytes described in this module's docstring;
    `GraphDef.FromString(b)` and `ParseFromString(b)` read them back, and also read
    TensorFlow's GraphDef protobuf (binary or text; framework/graph_def_proto.py).
    Users see TF's protobuf message instead: `tf.GraphDef` is that class and
    `Graph.as_graph_def()` returns one.
    """

    def __init__(self, node: Optional[List[NodeDef]] = None,
                 versions: Optional[VersionDef] = None,  # noqa: F811
                 library=None):
        self.node = node or []
        self.versions = versions or VersionDef()
        # the FunctionDefs its functional ops call (function_library.FunctionLibrary);
        # only GraphDefs decoded from TF's protobuf have one, the JSON form does not
        self.library = library

    def SerializeToString(self) -> bytes:  # noqa: N802 - TF's protobuf method name
        return json.dumps(self._to_json(), sort_keys=True, separators=(",", ":")).encode()

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802
        other = GraphDef.FromString(data)
        self.node, self.versions, self.library = other.node, other.versions, other.library

    @staticmethod
    def FromString(data) -> "GraphDef":  # noqa: N802
        from tensorweave.framework import graph_def_proto
        return graph_def_proto.parse_graph_def(data)

    @staticmethod
    def _from_json(data) -> "GraphDef":
        try:
            doc = json.loads(data.decode() if isinstance(data, (bytes, bytearray)) else data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError("Not a tensorweave GraphDef: %s" % e) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("Not a tensorweave GraphDef (expected format %r)" % FORMAT)
        v = doc.get("versions", {})
        producer = int(v.get("producer", 0))
        min_consumer = int(v.get("min_consumer", 0))
        if min_consumer > PRODUCER:
            raise ValueError("GraphDef min_consumer %d is newer than this tensorweave "
                             "(version %d); upgrade tensorweave to read it"
                             % (min_consumer, PRODUCER))
        return GraphDef([NodeDef._from_json(n) for n in doc.get("node", [])],
                        VersionDef(producer, min_consumer))

    def _to_json(self) -> dict:
        return {"format": FORMAT,
                "versions": {"producer": self.versions.producer,
                             "min_consumer": self.versions.min_consumer},
                "node": [n._to_json() for n in self.node]}

    def ByteSize(self) -> int:  # noqa: N802
        return len(self.SerializeToString())

    def __eq__(self, other):
        return isinstance(other, GraphDef) and self._to_json() == other._to_json()

    def __repr__(self):
        return json.dumps(self._to_json(), indent=2, sort_keys=True)


# --- attr values -------------------------------------------------------------------------
def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def encode_attr(v: Any, node: str = "?", key: str = "?") -> dict:
    """The JSON form of one attr value (see the module docstring)."""
    if v is None:
        return {"none": True}
    if isinstance(v, _dt.DType):
        return {"type": v.name}
    if isinstance(v, TensorShape):
        return {"shape": None if v.ndims is None else
                [-1 if d is None else d for d in v.as_list()]}
    if isinstance(v, (bool, np.bool_)):
        return {"b": bool(v)}
    if isinstance(v, (int, np.integer)):
        return {"i": int(v)}
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return {"f": f if math.isfinite(f) else repr(f)}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, bytes):
        return {"bytes": _b64(v)}
    if isinstance(v, np.ndarray):
        return {"tensor": _encode_array(v)}
    if isinstance(v, (list, tuple)):
        return {"list": [encode_attr(x, node, key) for x in v]}
    raise ValueError("Cannot serialize attr '%s' of node '%s': values of type %s have no "
                     "GraphDef form" % (key, node, type(v).__name__))


def _encode_array(a: np.ndarray) -> dict:
    dt = _dt.string if a.dtype == object else _dt.as_dtype(a.dtype)
    out = {"dtype": dt.name, "shape": list(a.shape)}
    if dt is _dt.string:
        out["string_val"] = [_b64(x if isinstance(x, bytes) else str(x).encode())
                             for x in a.reshape(-1)]
    else:
        le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
        out["content"] = _b64(le.tobytes())
    return out


def decode_attr(d: dict) -> Any:
    """The attr value of its JSON form."""
    if not isinstance(d, dict) or len(d) != 1:
        raise ValueError("Malformed attr value in GraphDef: %r" % (d,))
    (kind, v), = d.items()
    if kind == "none":
        return None
    if kind == "type":
        return _dt.as_dtype(v)
    if kind == "shape":
        return TensorShape(None if v is None else [None if x < 0 else x for x in v])
    if kind == "b":
        return bool(v)
    if kind == "i":
        return int(v)
    if kind == "f":
        return float(v)
    if kind == "s":
        return str(v)
    if kind == "bytes":
        return base64.b64decode(v)
    if kind == "tensor":
        return _decode_array(v)
    if kind == "list":
        return [decode_attr(x) for x in v]
    raise ValueError("Unknown attr kind %r in GraphDef" % kind)


def _decode_array(d: dict) -> np.ndarray:
    dt = _dt.as_dtype(d["dtype"])
    shape = tuple(d["shape"])
    if dt is _dt.string:
        flat = np.empty(len(d["string_val"]), dtype=object)
        flat[:] = [base64.b64decode(s) for s in d["string_val"]]
        arr = flat.reshape(shape)
    else:
        np_dt = np.dtype(dt.as_numpy_dtype)
        raw = np.frombuffer(base64.b64decode(d["content"]), dtype=np_dt.newbyteorder("<"))
        arr = raw.astype(np_dt).reshape(shape)
    arr.setflags(write=False)
    return arr


# --- graph -> GraphDef -------------------------------------------------------------------
def _input_name(t: Tensor) -> str:
    return t._op._name if t._value_index == 0 else "%s:%d" % (t._op._name, t._value_index)


def node_def_of(op: Operation, add_shapes: bool = False) -> NodeDef:
    attrs = dict(op._attrs)
    if op._colocation:
        attrs["_class"] = ["loc:@" + n for n in op._colocation]
    if add_shapes:
        attrs["_output_shapes"] = [t._shape for t in op._outputs]
    inputs = [_input_name(t) for t in op._inputs] + ["^" + c._name for c in op._control_inputs]
    return NodeDef(op._name, op._type, inputs, op._device, attrs)


def graph_to_graph_def(graph: Graph, add_shapes: bool = False) -> GraphDef:
    return GraphDef([node_def_of(op, add_shapes) for op in graph._ops], versions())


# --- GraphDef -> graph -------------------------------------------------------------------
def parse_input(s: str):
    """("op", index) for a data input, ("op", None) for a control input."""
    if s[:1] == "^":
        return s[1:], None
    if ":" not in s:  # the common "op" form, before the general split
        return s, 0
    name, _, idx = s.rpartition(":")
    if name and idx.isdigit():
        return name, int(idx)
    return s, 0


class UniqueNames:
    """The node names of a GraphDef in use; `fresh(base)` gives TF's "<base>",
    "<base>_1", ... not in use yet (and takes it)."""

    def __init__(self, taken):
        self._taken = set(taken)

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = "%s_%d" % (base, k)
        self._taken.add(name)
        return name


def reached_through(nodes, known: dict, carries) -> dict:
    """`known` ({node name: value}) extended to every node `carries(node)` accepts that
    has a known node among its data inputs (taking the first one's value): what flows
    through pass-through nodes (Identity, Switch, Merge, Enter, ...). Repeated to a fixed
    point, since a GraphDef need not be in order and a loop's back edge comes last.
    `nodes` are NodeDefs of either form (this module's or TF's protobuf)."""
    out = dict(known)
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if n.name in out or not carries(n):
                continue
            for s in n.input:
                src, index = parse_input(s)
                if index is not None and src in out:
                    out[n.name] = out[src]
                    changed = True
                    break
    return out


def _topological(nodes: List[NodeDef]) -> List[NodeDef]:
    by_name = {n.name: n for n in nodes}
    if len(by_name) != len(nodes):
        seen = set()
        for n in nodes:
            if n.name in seen:
                raise ValueError("Node '%s' is not unique" % n.name)  # TF's message
            seen.add(n.name)
    if _in_order(nodes, by_name):
        return list(nodes)  # what the walk below gives for them, found in one pass
    order: List[NodeDef] = []
    state: Dict[str, int] = {}  # 1: on the stack, 2: emitted
    for root in nodes:
        if state.get(root.name):
            continue
        stack = [(root, False)]
        while stack:
            n, expanded = stack.pop()
            if expanded:
                state[n.name] = 2
                order.append(n)
                continue
            if state.get(n.name) == 2:
                continue
            state[n.name] = 1
            stack.append((n, True))
            merge = n.op == "Merge"  # (only a Merge has back edges: _is_back_edge)
            for s in n.input:
                dep = by_name.get(parse_input(s)[0])
                if dep is None or merge and _is_back_edge(n, dep):
                    continue
                st = state.get(dep.name)
                if st == 1:
                    raise ValueError("GraphDef has a cycle through node '%s'; importing "
                                     "graphs with loops is not supported" % dep.name)
                if not st:
                    stack.append((dep, False))
    return order


def _in_order(nodes: List[NodeDef], by_name: Dict[str, NodeDef]) -> bool:
    """Whether every node of `nodes` comes after the nodes it reads (loop back edges
    aside), as in the GraphDefs TF writes."""
    seen = set()
    for n in nodes:
        merge = n.op == "Merge"
        for s in n.input:
            src = parse_input(s)[0]
            if src not in seen:
                dep = by_name.get(src)
                if dep is not None and not (merge and _is_back_edge(n, dep)):
                    return False
        seen.add(n.name)
    return True


def _is_back_edge(node: NodeDef, dep: Optional[NodeDef]) -> bool:
    """Whether the edge dep -> node closes a while loop (NextIteration -> Merge): the
    Merge is created first and the edge set once the NextIteration exists."""
    return node.op == "Merge" and dep is not None and dep.op == "NextIteration"


def _ref_style_handles(graph_def: GraphDef) -> set:
    """The handles of our variables made as TF1 reference variables (REF_VARIABLE_ATTR,
    shared_name = node name): like a VariableV2 with no shared_name, each names its
    resource after its node, so that two imports under two scopes hold two variables."""
    from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
    return {n.name for n in graph_def.node
            if n.op == "VarHandleOp" and n.attr.get(REF_VARIABLE_ATTR)
            and n.attr.get("shared_name") == n.name}


@tf_export("import_graph_def", "graph_util.import_graph_def")
def import_graph_def(graph_def, input_map: Optional[Dict[str, Any]] = None,
                     return_elements: Optional[List[str]] = None, name: Optional[str] = None,
                     op_dict=None, producer_op_list=None):
    """Imports the graph in `graph_def` into the default graph (TF1 `tf.import_graph_def`).

    Args:
      graph_def: a GraphDef: ours, TensorFlow's GraphDef protobuf message, or the
        serialized bytes of either (binary or text protobuf, or our JSON).
      input_map: maps names in `graph_def` ("x:0", "x", or "^x" for control inputs) to
        Tensors (or Operations) of the default graph that replace them.
      return_elements: names in `graph_def` to return: "op" gives the Operation, "op:0"
        the Tensor.
      name: prefix for the imported names (default "import"; "" for none).
      op_dict, producer_op_list: accepted for compatibility; unused.

    A node whose name is taken in the default graph (by a node, or as the scope of one)
    is renamed as TF renames it: "a" becomes "a_1" (or the next free "a_N"); the nodes
    that read it, control inputs and "_class" colocations included, follow it, and
    `input_map` and `return_elements` keep naming it by its name in `graph_def`. A
    reference variable with no shared_name holds the resource named by its node's name
    in the graph, as in TF.

    TF1 reference variables (VariableV2, Assign, Apply*, ...) import as the resource
    variables that compute the same (framework/ref_variables.py). Graphs with TF1 while
    loops import: a Merge's input from a NextIteration (the loop's back edge) is set
    once the loop body exists. Any other cycle is an error. TF 2.x's functional ops
    (If, While, Case, PartitionedCall, calls of library functions) are lowered to
    tf.cond / tf.while_loop / tf.switch_case and inlined calls of the GraphDef's function
    library (framework/functional_lowering.py), under their node's name.

    Returns:
      The list of `return_elements` (None when not given).

    Raises:
      ValueError: a cycle that is not a while loop, an input naming a missing node, an
        input_map key that names nothing in `graph_def` or maps a tensor of another
        dtype, a missing return element, a reference variable use with no resource
        form, or a malformed GraphDef.
      NotFoundError: a node's op type is not registered.
      InvalidArgumentError: a functional op calls a function the library lacks.
    """
    with gc_paused():
        return _import_graph_def(graph_def, input_map, return_elements, name)


@contextlib.contextmanager
def gc_paused():
    """Pauses Python's cyclic garbage collector (if it runs) for the block: an import
    makes tens of thousands of objects that all live on, and the collections their
    allocations would set off (each one walking every older object) cost a quarter to
    a third of the import; the collector's next pass after the block covers them."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _import_graph_def(graph_def, input_map, return_elements, name):
    if not isinstance(graph_def, GraphDef):
        from tensorweave.framework import graph_def_proto
        graph_def = graph_def_proto.as_graph_def_object(graph_def)
    # TF1 reference variables with no shared_name hold the resource named by their node
    unshared_vars = set()
    if any(n.op in ("VariableV2", "Variable") for n in graph_def.node):
        from tensorweave.framework import ref_variables
        unshared_vars = {n.name for n in graph_def.node if n.op in ("VariableV2", "Variable")
                         and not n.attr.get("shared_name")}
        graph_def = ref_variables.to_resource_variables(graph_def)
    unshared_vars |= _ref_style_handles(graph_def)
    input_map = _checked_input_map(input_map, {n.name for n in graph_def.node})
    g = get_default_graph()
    location = g._fix_op_location()
    try:
        with g.name_scope(name if name is not None else "import") as scope:
            input_map = _converted_input_map(g, input_map)
            order = _topological(graph_def.node)
            new_names = _imported_names(g, scope, order)
            importer = NodeImporter(g, input_map, graph_def.library, scope, new_names,
                                    unshared_vars)
            lowers = importer.lowers_any(order)
            if lowers:
                # the ops the lowering builds take other names than the GraphDef's nodes
                _reserve_names(g, new_names.values())
            importer.import_nodes(order, lowers)
    finally:
        g._release_op_location(location)
    created = importer.created
    _check_input_map_outputs(input_map, created)
    if any(op._type in ("Enter", "RefEnter", "Merge", "RefMerge") for op in created.values()):
        # loops and conds differentiate again (their contexts, from the graph's shape)
        from tensorweave.ops.control_flow import imported_contexts
        imported_contexts.rebuild_contexts(g, list(created.values()))
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        src, idx = parse_input(r)
        out.append(_return_element(created, r))
    return out


class NodeImporter:
    """Creates the ops of GraphDef nodes in a graph: one import, or one function body
    that framework/functional_lowering.py imports in place of a functional op.

    Attributes:
      created: {node name: the Operation made for it}.
    """

    def __init__(self, g: Graph, input_map: Dict[str, Any], library, scope: str,
                 new_names: Dict[str, str], unshared_vars=frozenset()):
        self.graph = g
        self.input_map = input_map
        if library is None:
            from tensorweave.framework.function_library import FunctionLibrary
            library = FunctionLibrary()
        self.library = library
        self.scope = scope
        self.new_names = new_names  # nodes missing here take a fresh name when made
        self.unshared_vars = unshared_vars
        self.created: Dict[str, Operation] = {}
        from tensorweave.framework import op_builder  # (op_builder imports this module)
        self._op_builder = op_builder

    def lowers_any(self, nodes: List[NodeDef]) -> bool:
        """Whether some of `nodes` are functional ops that the import lowers."""
        from tensorweave.framework import functional_lowering
        return any(functional_lowering.is_functional(n, self.library) for n in nodes)

    def import_body(self, nodes: List[NodeDef], args: Dict[str, Tensor]
                    ) -> Dict[str, Operation]:
        """Imports a function body's `nodes` (function_library.instantiate's notation)
        under the current name scope, its input args read from `args`."""
        scope = self.graph.get_name_scope()
        body = NodeImporter(self.graph, args, self.library, scope + "/" if scope else "", {})
        body.import_nodes(_topological(nodes))
        return body.created

    def import_nodes(self, order: List[NodeDef], lowers: Optional[bool] = None) -> None:
        """Creates the ops of `order` (topologically sorted, but for loop back edges);
        `lowers`: whether some are functional ops (`lowers_any`), when known."""
        by_name = {n.name: n for n in order}
        back_edges = []  # (Merge op, input index, NextIteration node, output index)
        if lowers is None:
            lowers = self.lowers_any(order)
        if lowers:
            from tensorweave.framework import functional_lowering
        for nd in order:
            inputs, controls, loop_inputs = self._inputs(nd, by_name)
            if lowers:
                if functional_lowering.is_functional(nd, self.library):
                    self.created[nd.name] = functional_lowering.lower_node(
                        self, nd, inputs, controls, self._name_of(nd))
                    continue
            op = self.create(nd, inputs, controls, loop_inputs)
            self.created[nd.name] = op
            back_edges.extend((op, i, src, idx) for i, src, idx in loop_inputs)
        for op, i, src, idx in back_edges:
            op._update_input(i, _lookup(self.created, src, by_name[src])._outputs[idx])

    def _name_of(self, nd: NodeDef) -> str:
        name = self.new_names.get(nd.name)
        if name is None:
            name = self.new_names[nd.name] = self.graph.unique_name(nd.name)
        return name

    def _inputs(self, nd: NodeDef, by_name: Dict[str, NodeDef]):
        """(data inputs, control inputs, loop back edges) of `nd`; a back edge's input is
        None until the loop body exists."""
        created, input_map = self.created, self.input_map
        inputs, controls, loop_inputs = [], [], []
        for s in nd.input:
            src, idx = parse_input(s)
            if idx is None:
                mapped = input_map.get(s)
                controls.append(mapped if mapped is not None else _lookup(created, src, nd))
                continue
            mapped = None
            if input_map:
                mapped = input_map.get("%s:%d" % (src, idx))
                if mapped is None and idx == 0:
                    mapped = input_map.get(src)
            if mapped is not None:
                inputs.append(mapped)
            elif src not in created and _is_back_edge(nd, by_name.get(src)):
                loop_inputs.append((len(inputs), src, idx))
                inputs.append(None)  # set by import_nodes, once the loop body exists
            else:
                op = _lookup(created, src, nd)
                if idx >= len(op._outputs):
                    raise ValueError("Node '%s': input '%s' names output %d of '%s', which "
                                     "has %d outputs" % (nd.name, s, idx, src,
                                                         len(op._outputs)))
                inputs.append(op._outputs[idx])
        return inputs, controls, loop_inputs

    def create(self, nd: NodeDef, inputs: List[Tensor], controls: list,
               loop_inputs=()) -> Operation:
        """Creates the op of `nd` with these `inputs` and `controls`; `loop_inputs`
        are its loop back edges (None in `inputs` until the loop body exists)."""
        ob = self._op_builder
        g = self.graph
        op_def = registered_op_def(nd)
        full = self._name_of(nd)
        attrs = _complete_attrs(nd, op_def, full)
        if loop_inputs:  # a stand-in of the same dtype until then
            stand_in = next((t for t in inputs if t is not None), None)
            if stand_in is None:
                raise ValueError("Merge node '%s' has only NextIteration inputs" % nd.name)
            inputs = [stand_in if t is None else t for t in inputs]
        _check_input_dtypes(inputs, ob.arg_dtypes(op_def.inputs, attrs), full, nd.op)
        if nd.name in self.unshared_vars and nd.op == "VarHandleOp":
            attrs["shared_name"] = full
        dtypes = ob.output_dtypes(op_def, attrs)
        if controls:
            with g.control_dependencies(controls):
                op = g._create_op_raw(nd.op, inputs, dtypes, attrs, op_def, full + "/")
        else:
            op = g._create_op_raw(nd.op, inputs, dtypes, attrs, op_def, full + "/")
        g._names_in_use.setdefault(full.lower(), 1)
        if nd.device:
            op._set_device(nd.device)
        colocation = nd.attr.get("_class")
        if colocation:  # a renamed node's new name, as TF rewrites "_class"
            op._colocation = [self.new_names.get(c[len("loc:@"):], self.scope +
                                                 c[len("loc:@"):])
                              for c in colocation if c.startswith("loc:@")]
        ob.infer_shapes(op)
        if loop_inputs:  # the value changes each iteration: unknown, as TF imports it
            op._outputs[0]._shape = TensorShape(None)
        return op


def _complete_attrs(nd: NodeDef, op_def, full: str) -> Dict[str, Any]:
    """`nd`'s attrs with its op's defaults (and without "_class", "_output_shapes").

    Raises:
      ValueError: a required attr is missing (TF's message).
    """
    attrs = {k: v for k, v in nd.attr.items() if k not in ("_class", "_output_shapes")}
    for k, default in op_def.attrs.items():
        if k not in attrs:
            d = default.default if isinstance(default, (_reg.TypeAttr,
                                                        _reg.TypeListAttr)) else default
            if d is _reg.REQUIRED:
                raise ValueError("NodeDef missing attr '%s' from Op<name=%s>; "
                                 "NodeDef: {{node %s}}" % (k, nd.op, full))
            attrs[k] = d
    return attrs


def _reserve_names(g: Graph, names) -> None:
    """Marks `names` and their scopes as used in `g`, so that ops made by builders
    (the lowering of functional ops) take other names."""
    for n in _name_and_prefixes(names):
        g._names_in_use.setdefault(n.lower(), 1)


def _return_element(created: Dict[str, Operation], requested: str):
    """The imported Operation ("op") or Tensor ("op:N") that `requested` names."""
    src, idx = parse_input(requested)
    op = created.get(src)
    if ":" not in requested:
        if op is None:
            raise ValueError("Requested return node '%s' not found in graph def" % requested)
        return op
    if op is None:
        raise ValueError("Requested return tensor '%s' not found in graph def" % requested)
    if idx >= len(op._outputs):
        raise ValueError("Invalid return output %d of node '%s', which has %d output(s)"
                         % (idx, src, len(op._outputs)))
    return op._outputs[idx]


def registered_op_def(nd: NodeDef):
    """The OpDef of node `nd`'s op.

    Raises:
      NotFoundError: the op type is not registered (TF's class and message).
    """
    try:
        return _reg.get_op_def(nd.op)
    except ValueError:
        import socket
        from tensorweave.framework import errors
        raise errors.NotFoundError(
            None, None, "Op type not registered '%s' in binary running on %s. Make sure "
            "the Op and Kernel are registered in the binary running in this process "
            "(node '%s')." % (nd.op, socket.gethostname(), nd.name)) from None


def _converted_input_map(g: Graph, input_map: Dict[str, Any]) -> Dict[str, Any]:
    """`input_map` with its values made Tensors as TF makes them (constants under the
    "_inputs" scope); Operations, which replace control inputs, stay as they are."""
    from tensorweave.framework.op_builder import convert_to_tensor

    def kept(key, value):
        return isinstance(value, Tensor) or (key.startswith("^") and
                                             isinstance(value, Operation))
    if all(kept(k, v) for k, v in input_map.items()):
        return input_map
    with g.name_scope("_inputs"):
        return {k: v if kept(k, v) else convert_to_tensor(v) for k, v in input_map.items()}


def _checked_input_map(input_map, names: set) -> Dict[str, Any]:
    """`input_map` as a dict, checked as TF checks it.

    Raises:
      TypeError: it is not a dict of string keys.
      ValueError: a key names no node of the GraphDef (`names`).
    """
    if input_map is None:
        return {}
    if not isinstance(input_map, dict):
        raise TypeError("Argument `input_map` must be a dictionary. Obtained %s"
                        % type(input_map).__name__)
    if not all(isinstance(k, str) for k in input_map):
        raise TypeError("All keys for argument `input_map` must be strings. Obtained keys: "
                        "%s" % list(input_map))
    missing = [k for k in input_map if parse_input(k)[0] not in names]
    if missing:
        raise _unmapped_error(missing)
    return dict(input_map)


def _check_input_map_outputs(input_map: Dict[str, Any], created: Dict[str, Operation]) -> None:
    """Raises TF's ValueError for input_map keys naming an output their node lacks."""
    missing = []
    for key in input_map:
        src, idx = parse_input(key)
        if idx is not None and idx >= len(created[src]._outputs):
            missing.append(key)
    if missing:
        raise _unmapped_error(missing)


def _unmapped_error(keys: List[str]) -> ValueError:
    return ValueError("Attempted to map inputs that were not found in graph_def: [%s]"
                      % ", ".join(keys))


def _check_input_dtypes(inputs: List[Tensor], want: list, node: str, op_type: str) -> None:
    """Raises TF's ValueError where a node has not as many inputs as its op takes, or an
    input (from the GraphDef or from input_map) has not the dtype its op takes there."""
    type_string = _dt.type_string
    if len(inputs) != len(want):
        raise ValueError("NodeDef expected inputs '%s' do not match %d inputs specified; "
                         "Op<name=%s>; NodeDef: {{node %s}}"
                         % (", ".join(type_string(d) for d in want), len(inputs), op_type,
                            node))
    for i, (t, expected) in enumerate(zip(inputs, want)):
        have = t.dtype  # (our DTypes are their own base_dtype: no reference dtypes)
        if have is not expected and have != expected:
            raise ValueError("Input %d of node %s was passed %s from %s incompatible with "
                             "expected %s." % (i, node, type_string(have), t.name,
                                               type_string(expected)))


def _name_and_prefixes(names) -> set:
    """`names` and every scope above them ("a/b/c" gives "a/b/c", "a/b" and "a")."""
    out = set()
    for n in names:
        out.add(n)
        i = n.rfind("/")
        while i > 0:
            out.add(n[:i])
            i = n.rfind("/", 0, i)
    return out


def _imported_names(g: Graph, scope: str, nodes: List[NodeDef]) -> Dict[str, str]:
    """The name each node of the GraphDef gets in `g`: `scope` + its name, or, where that
    is a node of `g` or a scope of one (case-sensitively), the first of "<name>_1",
    "<name>_2", ... that is neither those nor a name or scope of the GraphDef's nodes, as
    TF's importer uniquifies them (graph_constructor.cc FindUniqueName; TF does not log
    it). TF checks the generated names against the GraphDef's names without the scope
    and so can make two nodes of one name when importing under a scope that holds them
    already; they are checked here with and without it."""
    out: Dict[str, str] = {}
    if not g._ops_by_name:
        for nd in nodes:
            out[nd.name] = scope + nd.name
        return out
    existing = _name_and_prefixes(g._ops_by_name)
    gdef = None
    taken = set()  # names made here: never give one twice
    for nd in nodes:
        full = scope + nd.name
        if full in existing:
            if gdef is None:
                raw = _name_and_prefixes(n.name for n in nodes)
                gdef = raw | {scope + n for n in raw}
            count = 1
            while True:
                candidate = "%s_%d" % (full, count)
                if candidate not in existing and candidate not in gdef and \
                        candidate not in taken:
                    break
                count += 1
            full = candidate
            taken.add(full)
        out[nd.name] = full
    return out


def _lookup(created: Dict[str, Operation], src: str, nd: NodeDef) -> Operation:
    op = created.get(src)
    if op is None:
        raise ValueError("Node '%s': Unknown input node '%s'" % (nd.name, src))
    return op
