"""`tf.graph_util` (freezing and pruning GraphDefs) and `tf.train.write_graph`.

The functions work on TensorFlow's GraphDef protobuf messages (see graph_def_proto.py)
and return such messages, as TF1's do; they also accept our own GraphDef objects.
"""
from __future__ import annotations

import logging
import os
from typing import Iterable, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph_def_proto as _gp
from tensorweave.framework import serialize as _ser
from tensorweave.framework.api_export import tf_export

_log = logging.getLogger("tensorflow")
_VARIABLE_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp")


def _as_proto(graph_def):
    if _gp.is_graph_def_proto(graph_def):
        return graph_def
    if isinstance(graph_def, _ser.GraphDef):
        return _gp.graph_def_to_proto(graph_def)
    raise TypeError("graph_def must be a graph_pb2.GraphDef proto, but got type %s."
                    % type(graph_def))


def _node_name(s: str) -> str:
    s = s[1:] if s.startswith("^") else s
    name, _, idx = s.rpartition(":")
    return name if name and idx.isdigit() else s


@tf_export("graph_util.extract_sub_graph")
def extract_sub_graph(graph_def, dest_nodes: List[str]):
    """The part of `graph_def` that the nodes `dest_nodes` depend on (through data and
    control inputs), in the original node order.

    Args:
      graph_def: a GraphDef proto (or our GraphDef).
      dest_nodes: names of the nodes to keep, with what they need.

    Returns:
      A new GraphDef proto.

    Raises:
      TypeError: `graph_def` is not a GraphDef or `dest_nodes` not a list of strings.
      AssertionError: a name in `dest_nodes` is not a node of `graph_def`.
    """
    graph_def = _as_proto(graph_def)
    if isinstance(dest_nodes, str) or not all(isinstance(n, str) for n in dest_nodes):
        raise TypeError("dest_nodes must be an iterable of strings, but got type %s."
                        % type(dest_nodes))
    by_name = {n.name: n for n in graph_def.node}
    for d in dest_nodes:
        if d not in by_name:
            raise AssertionError("%s is not in graph" % d)
    keep = set()
    stack = [_node_name(d) for d in dest_nodes]
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        node = by_name.get(name)
        if node is not None:
            stack.extend(_node_name(s) for s in node.input)
    out = type(graph_def)()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


@tf_export("graph_util.remove_training_nodes")
def remove_training_nodes(input_graph, protected_nodes: Optional[Iterable[str]] = None):
    """`input_graph` without the nodes only training needs: CheckNumerics nodes, and
    Identity nodes that nothing depends on by a control edge, that have no control
    inputs themselves and are not in `protected_nodes`; their consumers read the
    Identity's input instead.

    Returns:
      A new GraphDef proto.
    """
    input_graph = _as_proto(input_graph)
    protected = set(protected_nodes or ())
    control_targets = {s[1:] for n in input_graph.node for s in n.input if s.startswith("^")}
    splice = {}
    for n in input_graph.node:
        if n.name in protected or n.name in control_targets:
            continue
        data_inputs = [s for s in n.input if not s.startswith("^")]
        if n.op == "CheckNumerics" or (n.op == "Identity" and len(data_inputs) == len(
                n.input) and len(data_inputs) == 1):
            splice[n.name] = data_inputs[0] if data_inputs else None

    def resolve(s: str) -> str:
        caret = s.startswith("^")
        body = s[1:] if caret else s
        seen = set()
        while _node_name(body) in splice and body not in seen:
            seen.add(body)
            target = splice[_node_name(body)]
            if target is None:
                break
            body = target if not caret else _node_name(target)
        return ("^" if caret else "") + body

    out = type(input_graph)()
    out.versions.CopyFrom(input_graph.versions)
    out.library.CopyFrom(input_graph.library)
    for n in input_graph.node:
        if n.name in splice:
            continue
        new = out.node.add()
        new.CopyFrom(n)
        del new.input[:]
        new.input.extend(resolve(s) for s in n.input)
    return out


@tf_export("graph_util.must_run_on_cpu")
def must_run_on_cpu(node, pin_variables_on_cpu: bool = False) -> bool:
    """Whether the node (an Operation or a NodeDef) must run on the CPU: int32 and string
    constants, int32 DynamicStitch and Cast from int32, and, when `pin_variables_on_cpu`,
    variables."""
    from tensorweave.framework.graph import Operation
    if isinstance(node, Operation):
        op_type = node.type

        def attr(k):
            try:
                return node._get_attr(k)
            except ValueError:
                return None
    elif isinstance(node, _ser.NodeDef):
        op_type = node.op

        def attr(k):
            return node.attr.get(k)
    else:
        op_type = node.op

        def attr(k):
            return _gp.attr_from_proto(node.attr[k]) if k in node.attr else None
    if pin_variables_on_cpu and op_type in _VARIABLE_OPS:
        return True
    if op_type == "Const":
        return attr("dtype") in (_dt.string, _dt.int32)
    if op_type in ("DynamicStitch", "ParallelDynamicStitch"):
        return attr("T") is _dt.int32
    if op_type == "Cast":
        return attr("SrcT") is _dt.int32
    return False


@tf_export("graph_util.tensor_shape_from_node_def_name")
def tensor_shape_from_node_def_name(graph, input_name: str):
    """The static shape of the tensor `input_name` ("op" means "op:0") in `graph`."""
    if ":" not in input_name:
        input_name += ":0"
    return graph.get_tensor_by_name(input_name).get_shape()


def _is_handle(graph, name: str) -> bool:
    try:
        return graph.get_operation_by_name(name).type == "VarHandleOp"
    except (KeyError, ValueError):
        return False


def _variable_reads(graph, handle_names) -> dict:
    """handle op name -> a tensor of `graph` that reads that resource variable and does
    nothing else: a ReadVariableOp without control inputs (a read after an assign would
    run the assign)."""
    reads = {}
    for op in graph.get_operations():
        if op.type == "ReadVariableOp" and op.inputs[0].op.name in handle_names and \
                not op.control_inputs:
            reads.setdefault(op.inputs[0].op.name, op.outputs[0])
    return reads


@tf_export("graph_util.convert_variables_to_constants")
def convert_variables_to_constants(sess, input_graph_def, output_node_names: List[str],
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """Freezes a graph: each variable that `output_node_names` need becomes a Const
    holding its current value in `sess`, and the ops reading resource variables become
    Identity ops.

    Args:
      sess: the Session holding the variables' values.
      input_graph_def: the GraphDef (usually `sess.graph_def`).
      output_node_names: the names of the nodes to keep, with what they need.
      variable_names_whitelist: convert only these variables (node names).
      variable_names_blacklist: do not convert these variables.

    Returns:
      A GraphDef proto with no variables in the part `output_node_names` need.

    Raises:
      ValueError: a needed variable has no read op in `sess.graph`, or a resource
        variable is used by an op other than ReadVariableOp (e.g. ResourceGather),
        which has no frozen form here.
    """
    graph_def = extract_sub_graph(_as_proto(input_graph_def), output_node_names)
    white = None if variable_names_whitelist is None else set(variable_names_whitelist)
    black = set(variable_names_blacklist or ())
    chosen = [n for n in graph_def.node if n.op in _VARIABLE_OPS and
              (white is None or n.name in white) and n.name not in black]
    names = {n.name for n in chosen}
    resources = {n.name for n in chosen if n.op == "VarHandleOp"}
    # every variable of a tensorweave session is a resource variable, also those that
    # a TF1 reference-variable graph (VariableV2) became on import
    in_session = {n.name for n in chosen if _is_handle(sess.graph, n.name)}
    reads = _variable_reads(sess.graph, in_session)
    fetches = {}
    for n in chosen:
        if n.name in in_session:
            if n.name not in reads:
                raise ValueError("Cannot freeze resource variable '%s': the graph has no plain "
                                 "ReadVariableOp reading it" % n.name)
            fetches[n.name] = reads[n.name]
        else:
            fetches[n.name] = n.name + ":0"
    values = sess.run(fetches) if fetches else {}
    dtypes = {name: (_dt.string if np.asarray(v).dtype == object else
                     _dt.as_dtype(np.asarray(v).dtype)).as_datatype_enum
              for name, v in values.items()}
    # the ops a frozen variable's handle passes through (cond, while_loop, identity)
    # carry its value instead
    carried = _handle_carriers(graph_def, {n: dtypes[n] for n in resources})
    handles = resources | set(carried)
    identity_n = _identity_n_carriers(graph_def, {**{n: dtypes[n] for n in resources},
                                                  **carried})

    def reads_handle(s: str) -> bool:
        return _node_name(s) in handles or _output_slot(s) in identity_n.get(_node_name(s), ())

    out = type(graph_def)()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for n in graph_def.node:
        new = out.node.add()
        if n.name in names:
            new.name, new.op = n.name, "Const"
            value = np.asarray(values[n.name])
            dtype = _dt.string if value.dtype == object else _dt.as_dtype(value.dtype)
            new.attr["dtype"].type = dtype.as_datatype_enum
            _gp.array_to_tensor_proto(value, new.attr["value"].tensor)
            if n.device:
                new.device = n.device
        elif n.op == "ReadVariableOp" and (_node_name(n.input[0]) in names or
                                           reads_handle(n.input[0])):
            new.name, new.op = n.name, "Identity"
            new.input.extend(n.input)
            new.attr["T"].type = n.attr["dtype"].type
            if n.device:
                new.device = n.device
        elif n.name in carried:
            new.CopyFrom(n)
            new.attr["T"].type = carried[n.name]
        elif n.name in identity_n:
            new.CopyFrom(n)
            for slot, dtype in identity_n[n.name].items():
                new.attr["T"].list.type[slot] = dtype
        elif n.op == "ResourceGather" and reads_handle(n.input[0]):
            _gather_of_value(n, new, out)
        else:
            direct = [s for s in n.input if not s.startswith("^") and reads_handle(s)]
            if direct:
                raise ValueError("Cannot freeze: node '%s' (op %s) uses the resource "
                                 "variable '%s' directly; only ReadVariableOp reads are "
                                 "converted" % (n.name, n.op, _node_name(direct[0])))
            new.CopyFrom(n)
    _log.info("Froze %d variables.", len(chosen))
    _log.info("Converted %d variables to const ops.", len(chosen))
    return out


_HANDLE_CARRIERS = ("Identity", "Switch", "Merge", "Enter", "Exit", "NextIteration")


def _handle_carriers(graph_def, handles: dict) -> dict:
    """{node name: value dtype} of the pass-through nodes (Identity, the Switch/Merge of
    a cond, the Enter/Exit/NextIteration of a while loop) a frozen resource variable's
    handle reaches from `handles` ({variable node: dtype}); a loop's back edge makes
    this a fixed point."""
    resource = _dt.resource.as_datatype_enum
    carried = _ser.reached_through(
        graph_def.node, handles,
        lambda n: n.op in _HANDLE_CARRIERS and n.attr["T"].type == resource)
    for name in handles:
        del carried[name]
    return carried


def _identity_n_carriers(graph_def, handles: dict) -> dict:
    """{IdentityN node: {slot: value dtype}}: the IdentityN nodes (the outputs of a
    functional While or If, lowered on import) passing on a frozen variable's handle,
    from `handles` ({node carrying a handle: value dtype}), slot by slot."""
    out = {}
    for n in graph_def.node:
        if n.op == "IdentityN":
            slots = {i: handles[_node_name(s)] for i, s in enumerate(n.input)
                     if not s.startswith("^") and _node_name(s) in handles}
            if slots:
                out[n.name] = slots
    return out


def _output_slot(s: str) -> int:
    """The output index an input string ("node", "node:2") reads."""
    name = _node_name(s)
    return 0 if name == s else int(s.rpartition(":")[2])


def _gather_of_value(node, new, out) -> None:
    """`new` (in `out`): the GatherV2 of a frozen variable's value that the
    ResourceGather `node` was, with its axis (the batch dimensions, as TF's freezing
    writes it) a Const `<name>/axis`."""
    batch_dims = node.attr["batch_dims"].i if "batch_dims" in node.attr else 0
    axis = out.node.add()
    axis.name, axis.op = node.name + "/axis", "Const"
    axis.attr["dtype"].type = _dt.int32.as_datatype_enum
    _gp.array_to_tensor_proto(np.asarray(batch_dims, np.int32), axis.attr["value"].tensor)
    new.name, new.op = node.name, "GatherV2"
    new.input.extend(list(node.input[:2]) + [axis.name] + list(node.input[2:]))
    new.attr["Tparams"].type = node.attr["dtype"].type
    new.attr["Tindices"].type = node.attr["Tindices"].type
    new.attr["Taxis"].type = _dt.int32.as_datatype_enum
    new.attr["batch_dims"].i = batch_dims
    if node.device:
        new.device = axis.device = node.device


@tf_export("train.write_graph", "io.write_graph")
def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a graph (or GraphDef) as TensorFlow's GraphDef protobuf, in text form
    (.pbtxt) or binary (.pb), creating `logdir` if needed.

    Args:
      graph_or_graph_def: a Graph, a GraphDef proto or our GraphDef.
      logdir: the directory (local path or an fsspec URL).
      name: the file name in `logdir`.
      as_text: write the protobuf text format instead of binary.

    Returns:
      The path of the written file.
    """
    from tensorweave.framework.graph import Graph
    if isinstance(graph_or_graph_def, Graph):
        proto = _gp.graph_to_proto(graph_or_graph_def)
    else:
        proto = _as_proto(graph_or_graph_def)
    if as_text:
        from google.protobuf import text_format
        data = text_format.MessageToString(proto).encode()
    else:
        data = proto.SerializeToString()
    path = os.path.join(logdir, name)
    if "://" in logdir:
        import fsspec
        fs, _, (root,) = fsspec.get_fs_token_paths(logdir)
        fs.makedirs(root, exist_ok=True)
        with fsspec.open(path, "wb") as f:
            f.write(data)
    else:
        os.makedirs(logdir, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return path
