"""Importing graphs that TensorFlow 1.x wrote with reference variables (VariableV2).

tensorweave has resource variables only (ops/state/variables.py): TF1's reference dtypes
(`float32_ref`) do not exist here. `to_resource_variables` rewrites a GraphDef that uses
reference variables into the resource-variable graph that computes the same, keeping
every node name, so input_map, return_elements, collections and SaverDefs still name the
right things:

    VariableV2 / Variable W            -> VarHandleOp W (same dtype, shape, container,
                                          shared_name; REF_VARIABLE_ATTR)
    Identity(W)  (TF's "W/read")       -> ReadVariableOp
    IsVariableInitialized(W)           -> VarIsInitializedOp
    Assign / AssignAdd / AssignSub A   -> the resource update "A/update", and A a
                                          ReadVariableOp after it: A's output is the new
                                          value, as TF's ref output is
    Apply<X> / SparseApply<X> A        -> ResourceApply<X> / ResourceSparseApply<X>
                                          "A/update" and A a read of its first variable
    Scatter<Update|Add|...> A          -> ResourceScatter<...> "A/update" and A a read
    any other op C reading W           -> C reads W through a ReadVariableOp "C/read_W<i>"
                                          that carries C's control inputs and waits
                                          for C's other data inputs, so it reads when
                                          C would have read the reference (and not
                                          when a dead input skips C)

    RefSwitch / RefMerge / RefEnter /  -> Switch / Merge / Enter / ... of the handle
    RefExit / RefNextIteration /          (T = resource): its outputs stand for W, and
    RefIdentity of W                      their consumers are rewritten as W's (a
                                          moving average updated in a cond branch, a
                                          variable read or assigned in a while loop)

What has no such form raises ValueError naming the node: a reference of an update's
output passed on through control flow, an update whose resource op tensorweave lacks,
or a node taking a reference from an update's output.
"""
from __future__ import annotations

from typing import List

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework import serialize as _ser

REF_VARIABLE_OPS = frozenset(("VariableV2", "Variable"))
_RESOURCE = _dt.resource
_SWITCHES = ("Switch", "RefSwitch")
# The attr of a VarHandleOp that stands for a TF1 reference variable (one imported from
# a VariableV2, or made by tf.Variable / get_variable without use_resource): its output
# is TF1's "W:0", the `float32_ref` tensor, whose fetch is the variable's value. Leading
# underscore: TensorFlow's importer accepts such attrs on any op, so our graphs still
# import there.
REF_VARIABLE_ATTR = "_ref_variable"
_ASSIGNS = {"Assign": "AssignVariableOp", "AssignAdd": "AssignAddVariableOp",
            "AssignSub": "AssignSubVariableOp"}
_SCATTERS = ("ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
             "ScatterMin", "ScatterMax")
# reference control flow and the op each is for a resource handle
_REF_FLOW = {"RefSwitch": "Switch", "RefEnter": "Enter", "RefExit": "Exit",
             "RefMerge": "Merge", "RefNextIteration": "NextIteration",
             "RefIdentity": "Identity"}


def uses_ref_variables(graph_def: "_ser.GraphDef") -> bool:
    return any(n.op in REF_VARIABLE_OPS for n in graph_def.node)


def _resource_op(op_type: str):
    """The resource op that does what the reference op `op_type` does, or None."""
    if op_type in _ASSIGNS:
        return _ASSIGNS[op_type]
    if op_type in _SCATTERS:
        return "Resource" + op_type
    if op_type.startswith(("Apply", "SparseApply")):
        return "Resource" + op_type
    return None


def _resource_positions(op_type: str) -> int:
    """How many leading inputs of `op_type` are resources."""
    n = 0
    for arg in _reg.get_op_def(op_type).inputs:
        if arg.dtype is None or arg.dtype.name != "resource":
            break
        n += 1
    return n


def to_resource_variables(graph_def: "_ser.GraphDef") -> "_ser.GraphDef":
    """`graph_def` with its reference variables made resource variables (see the module
    docstring). Node names are kept; helper nodes get new names under the node they
    serve.

    Raises:
      ValueError: a use of a reference variable with no resource-variable form here.
    """
    # node name -> the VariableV2 it stands for (itself, or the variable a reference
    # control-flow node passes on)
    variables = {n.name: n for n in graph_def.node if n.op in REF_VARIABLE_OPS}
    if not variables:
        return graph_def
    # TF's GraphDefs are not in order here (a cond's RefSwitch is made when its branch
    # first uses the variable): the reference control flow to a fixed point first
    variables = _ser.reached_through(graph_def.node, variables,
                                     lambda nd: nd.op in _REF_FLOW)
    # Identity(W) nodes ("W/read") -> the variable input they read
    read_aliases = {}
    for nd in graph_def.node:
        data = [s for s in nd.input if not s.startswith("^")]
        if nd.op in ("Identity", "RefIdentity") and len(data) == 1 and \
                _ser.parse_input(data[0])[0] in variables:
            read_aliases[nd.name] = data[0]
    ops_by_name = {nd.name: nd.op for nd in graph_def.node}
    switch_types = {nd.name: nd.attr.get("T") for nd in graph_def.node if nd.op in _SWITCHES}
    names = _ser.UniqueNames(n.name for n in graph_def.node)
    updates = set()  # names of rewritten updates: their output is a value now
    out: List[_ser.NodeDef] = []

    def read(src: str, name: str, controls: List[str]) -> str:
        v = variables[_ser.parse_input(src)[0]]
        out.append(_ser.NodeDef(names.fresh(name), "ReadVariableOp", [src] + controls,
                                v.device, {"dtype": v.attr["dtype"]}))
        return out[-1].name

    for nd in graph_def.node:
        controls = [s for s in nd.input if s.startswith("^")]
        data = [s for s in nd.input if not s.startswith("^")]
        sources = [_ser.parse_input(s)[0] for s in data]  # (parsed once, read below)
        var_inputs = [i for i, src in enumerate(sources) if src in variables]
        for src in sources:
            if src in updates and (nd.op in _ASSIGNS or nd.op in _SCATTERS or
                                   _resource_op(nd.op) is not None):
                raise ValueError("Cannot import node '%s' (op %s): it updates the reference "
                                 "output of '%s', which tensorweave has no form for"
                                 % (nd.name, nd.op, src))
        if nd.op in REF_VARIABLE_OPS:
            attrs = {k: nd.attr[k] for k in ("dtype", "shape", "container", "shared_name")
                     if k in nd.attr}
            attrs.setdefault("shared_name", nd.name)
            if not attrs["shared_name"]:
                attrs["shared_name"] = nd.name
            attrs[REF_VARIABLE_ATTR] = True  # fetching "W:0" gives W's value, as in TF1
            out.append(_ser.NodeDef(nd.name, "VarHandleOp", controls, nd.device, attrs))
            continue
        if nd.op in _REF_FLOW and nd.name not in variables:
            raise ValueError("Cannot import node '%s' (op %s): a reference that is not a "
                             "variable's passed through control flow has no tensorweave "
                             "form" % (nd.name, nd.op))
        if not var_inputs:
            alias_inputs = [i for i, src in enumerate(sources) if src in read_aliases]
            if alias_inputs and controls:
                # TF's "W/read" forwards W's buffer: a consumer ordered after an update
                # (EMA's `control_dependencies([train_op])`) sees the updated value;
                # here it reads W itself, when its control inputs and data are ready
                inputs = list(data)
                after = controls + ["^" + _ser.parse_input(s)[0] for i, s in enumerate(data)
                                    if i not in alias_inputs and
                                    ops_by_name.get(_ser.parse_input(s)[0]) not in _SWITCHES]
                for i in alias_inputs:
                    inputs[i] = read(read_aliases[_ser.parse_input(data[i])[0]],
                                     "%s/read_%s" % (nd.name, i), after)
                nd = _ser.NodeDef(nd.name, nd.op, inputs + controls, nd.device, nd.attr)
            out.append(nd)
            continue
        if nd.op in _REF_FLOW and 0 in var_inputs:
            if nd.op == "RefMerge" and len(var_inputs) != len(data):
                raise ValueError("Cannot import node '%s' (op RefMerge): it merges a "
                                 "variable with another reference" % nd.name)
            attrs = dict(nd.attr)
            attrs["T"] = _RESOURCE
            out.append(_ser.NodeDef(nd.name, _REF_FLOW[nd.op], data + controls, nd.device,
                                    attrs))
            continue
        if nd.op == "Identity" and len(data) == 1:
            out.append(_ser.NodeDef(nd.name, "ReadVariableOp", [data[0]] + controls,
                                    nd.device, {"dtype": nd.attr.get("T")}))
            continue
        if nd.op == "IsVariableInitialized":
            out.append(_ser.NodeDef(nd.name, "VarIsInitializedOp", [data[0]] + controls,
                                    nd.device, {}))
            continue
        new_op = _resource_op(nd.op)
        if new_op is not None and 0 in var_inputs:
            try:
                n_res = _resource_positions(new_op)
            except ValueError:
                raise ValueError("Cannot import node '%s': its reference-variable op %s "
                                 "needs %s, which tensorweave does not have"
                                 % (nd.name, nd.op, new_op)) from None
            inputs = []
            for i, s in enumerate(data):
                if i < n_res:
                    if _ser.parse_input(s)[0] not in variables:
                        raise ValueError("Cannot import node '%s' (op %s): input %d must "
                                         "be a variable, got '%s'" % (nd.name, nd.op, i, s))
                    inputs.append(s)
                elif _ser.parse_input(s)[0] in variables:
                    inputs.append(read(s, "%s/read_%s" % (nd.name, i), controls))
                else:
                    inputs.append(s)
            attrs = dict(nd.attr)
            if nd.op in _ASSIGNS or nd.op in _SCATTERS:
                attrs = {"dtype": nd.attr.get("T")}
                if nd.op == "Assign":
                    attrs["validate_shape"] = bool(nd.attr.get("validate_shape", True))
                if nd.op in _SCATTERS and "Tindices" in nd.attr:
                    attrs["Tindices"] = nd.attr["Tindices"]
            update = _ser.NodeDef(names.fresh(nd.name + "/update"), new_op,
                                  inputs + controls, nd.device, attrs)
            out.append(update)
            var = inputs[0]
            v = variables[_ser.parse_input(var)[0]]
            out.append(_ser.NodeDef(nd.name, "ReadVariableOp", [var, "^" + update.name],
                                    v.device, {"dtype": v.attr["dtype"]}))
            updates.add(nd.name)
            continue
        inputs = list(data)
        # TF1 reads the reference inside the op, so only when the op runs: the read
        # waits for the op's other data inputs and, as the op, is skipped when one of
        # them is dead (a moving average's Sub(W, Switch:1) on its first step)
        after = controls + _gates(nd, data, var_inputs, switch_types, names, out)
        for i in var_inputs:
            inputs[i] = read(data[i], "%s/read_%s" % (nd.name, i), after)
        out.append(_ser.NodeDef(nd.name, nd.op, inputs + controls, nd.device, nd.attr))
    return _ser.GraphDef(out, graph_def.versions, graph_def.library)


def _gates(nd: "_ser.NodeDef", data: List[str], var_inputs: List[int], switch_types: dict,
           names: "_ser.UniqueNames", out: List["_ser.NodeDef"]) -> List[str]:
    """Control inputs that make a variable read for node `nd` wait for, and die with,
    `nd`'s data inputs that are not variables: each input's node, or for a Switch output
    (whose two outputs differ in deadness) an Identity of that output, added to `out`."""
    gates = []
    for i, s in enumerate(data):
        if i in var_inputs:
            continue
        src = _ser.parse_input(s)[0]
        if src in switch_types:
            gate = _ser.NodeDef(names.fresh("%s/gate_%d" % (nd.name, i)), "Identity", [s],
                                nd.device, {"T": switch_types[src]})
            out.append(gate)
            src = gate.name
        gates.append("^" + src)
    return gates

