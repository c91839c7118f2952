"""TF's WhileContextDef messages of a graph's while loops, for the MetaGraphDef's
"while_context" collection, so that TensorFlow differentiates the loops of a graph it
imports from us (TF1 finds a loop's WhileContext through that collection; without it
tf.gradients fails inside the loop).

A loop is written as TF writes it: its name (the frame name), parallel_iterations,
back_prop, swap_memory, the pivot (the LoopCond output), the pivot of the predicate
(the first Merge) and of the body (the first body Identity), its Enter and Exit outputs,
and in `values_def` the names of every tensor of the loop (its ops' outputs, Enters and
Exits included, and the results of the loops nested in it) with the loop invariants it
enters (`external_values`: the name outside every loop -> its Enter's output); loops
nested in it are
its `nested_contexts`. The collection lists the outermost loops. Our own import does not
read it: imported_contexts.py rebuilds contexts from the graph.

A tf.cond inside a loop is written as TF's CondContextDef nested in the loop's (its
predicate, pivot, branch, values, and the values it takes in through its Switches), one
per branch. Left out: conds outside every loop (TensorFlow differentiates them without
their contexts), loops inside such a cond, and a loop that names a tensor outside the
exported scope.
"""
from __future__ import annotations

import functools
from typing import Dict, List, Optional

from tensorweave.framework.proto_classes import message_classes
from tensorweave.ops.control_flow import control_flow_ops as cf


def while_context_defs(graph, export_scope: Optional[str] = None) -> List[bytes]:
    """The serialized WhileContextDef of each outermost while loop of `graph`, with the
    loops and conds nested in it (see the module docstring), names relative to
    `export_scope`; a loop naming a tensor outside the scope is left out."""
    members: Dict[int, list] = {}    # context -> the ops it holds
    contexts: Dict[int, object] = {}
    for op in graph.get_operations():
        ctx = op._control_flow_context
        if isinstance(ctx, (cf.WhileContext, cf.CondContext)):
            members.setdefault(id(ctx), []).append(op)
            while ctx is not None and id(ctx) not in contexts:
                contexts[id(ctx)] = ctx
                ctx = ctx.outer
    children: Dict[int, list] = {}   # context -> the contexts nested in it, in order
    switched = set()                 # the Switch ops by which conds take in values
    for ctx in contexts.values():
        if ctx.outer is not None:
            children.setdefault(id(ctx.outer), []).append(ctx)
        if isinstance(ctx, cf.CondContext):
            switched.update(id(v._op) for k, v in ctx._values.items() if k is not v)

    def name_of(tensor_name: str) -> str:
        n = _strip(tensor_name, export_scope)
        if n is None:
            raise _NotWritten(tensor_name)
        return n

    def name(t) -> str:
        return name_of(t.name)

    def values_of(ctx) -> set:
        out = {t.name for op in members.get(id(ctx), ()) if id(op) not in switched
               for t in op._outputs}
        for child in children.get(id(ctx), ()):  # a nested loop's results live here
            if isinstance(child, cf.WhileContext):
                out.update(t.name for t in child.exits)
        return out

    def fill_nested(proto, ctx) -> None:
        for child in children.get(id(ctx), ()):
            if isinstance(child, cf.WhileContext):
                fill_while(proto.nested_contexts.add().while_ctxt, child)
            else:
                fill_cond(proto.nested_contexts.add().cond_ctxt, child)

    def fill_while(proto, ctx) -> None:
        if ctx.pred is None or not ctx.exits:
            raise _NotWritten(ctx.name)
        proto.context_name = _strip(ctx.name, export_scope) or ctx.name
        proto.parallel_iterations = ctx.parallel_iterations
        proto.back_prop = bool(ctx.back_prop)
        proto.swap_memory = bool(ctx.swap_memory)
        proto.pivot_name = name(ctx.pred)
        proto.pivot_for_pred_name = name(ctx.merges[0])
        proto.pivot_for_body_name = name(ctx.pivot)
        proto.loop_exit_names.extend(name(t) for t in ctx.exits)
        proto.loop_enter_names.extend(name(t) for t in ctx.enters)
        values = values_of(ctx)
        for e in ctx.enter_ops:  # the loop invariants, as TF's AddValue records them:
            if e._attrs.get("is_constant"):  # keyed by the tensor outside every loop
                outside = _outside_loops(e._inputs[0])
                values.add(outside.name)
                proto.values_def.external_values[name(outside)] = name(e._outputs[0])
        proto.values_def.values.extend(sorted(name_of(n) for n in values))
        fill_nested(proto, ctx)

    def fill_cond(proto, ctx) -> None:
        proto.context_name = _strip(ctx.name, export_scope) or ctx.name
        proto.pred_name = name(ctx.pred)
        proto.pivot_name = name(ctx.pivot)
        proto.branch = ctx.branch
        values = values_of(ctx)
        for outside, inside in ctx._values.items():  # taken in through a Switch
            if outside is not inside:
                values.update((outside.name, inside.name))
                proto.values_def.external_values[name(outside)] = name(inside)
        proto.values_def.values.extend(sorted(name_of(n) for n in values))
        fill_nested(proto, ctx)

    message = _messages()
    out = []
    for ctx in graph._while_contexts:
        if ctx.outer is not None:
            continue  # written inside the loop (or left out with the cond) holding it
        proto = message()
        try:
            fill_while(proto, ctx)
        except _NotWritten:
            continue
        out.append(proto.SerializeToString())
    return out


class _NotWritten(Exception):
    """A loop that is not written: it names a tensor outside the exported scope, or it
    is not a finished tf.while_loop."""


def _outside_loops(t):
    """The tensor a chain of loop-invariant Enters (a nested loop's invariant entered
    through its outer loops) starts from."""
    while t._op._type in ("Enter", "RefEnter") and t._op._attrs.get("is_constant"):
        t = t._op._inputs[0]
    return t


def _strip(name: str, scope: Optional[str]) -> Optional[str]:
    if not scope:
        return name
    return name[len(scope) + 1:] if name.startswith(scope + "/") else None


@functools.lru_cache(maxsize=None)
def _messages():
    """The WhileContextDef class of tensorflow/core/protobuf/control_flow.proto, made
    from its schema (the `tensorboard` package does not ship it), with ValuesDef,
    CondContextDef and ControlFlowContextDef (for nested contexts)."""
    from google.protobuf import descriptor_pb2
    fd = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(
        name="tensorweave/control_flow.proto", package="tensorflow", syntax="proto3")

    def add(message, fields):
        for number, name, kind, label, type_name in fields:
            field = message.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
    opt, rep = fd.LABEL_OPTIONAL, fd.LABEL_REPEATED
    values = f.message_type.add(name="ValuesDef")
    add(values, [(1, "values", fd.TYPE_STRING, rep, None),
                 (2, "external_values", fd.TYPE_MESSAGE, rep,
                  ".tensorflow.ValuesDef.ExternalValuesEntry")])
    entry = values.nested_type.add(name="ExternalValuesEntry")
    entry.options.map_entry = True
    add(entry, [(1, "key", fd.TYPE_STRING, opt, None), (2, "value", fd.TYPE_STRING, opt, None)])
    context = f.message_type.add(name="ControlFlowContextDef")
    context.oneof_decl.add(name="ctxt")
    add(context, [(1, "cond_ctxt", fd.TYPE_MESSAGE, opt, ".tensorflow.CondContextDef"),
                  (2, "while_ctxt", fd.TYPE_MESSAGE, opt, ".tensorflow.WhileContextDef")])
    for field in context.field:
        field.oneof_index = 0
    cond = f.message_type.add(name="CondContextDef")
    add(cond, [(1, "context_name", fd.TYPE_STRING, opt, None),
               (2, "pred_name", fd.TYPE_STRING, opt, None),
               (3, "pivot_name", fd.TYPE_STRING, opt, None),
               (4, "branch", fd.TYPE_INT32, opt, None),
               (5, "values_def", fd.TYPE_MESSAGE, opt, ".tensorflow.ValuesDef"),
               (6, "nested_contexts", fd.TYPE_MESSAGE, rep,
                ".tensorflow.ControlFlowContextDef")])
    loop = f.message_type.add(name="WhileContextDef")
    add(loop, [(1, "context_name", fd.TYPE_STRING, opt, None),
               (2, "parallel_iterations", fd.TYPE_INT32, opt, None),
               (3, "back_prop", fd.TYPE_BOOL, opt, None),
               (4, "swap_memory", fd.TYPE_BOOL, opt, None),
               (5, "pivot_name", fd.TYPE_STRING, opt, None),
               (6, "pivot_for_pred_name", fd.TYPE_STRING, opt, None),
               (7, "pivot_for_body_name", fd.TYPE_STRING, opt, None),
               (8, "loop_exit_names", fd.TYPE_STRING, rep, None),
               (9, "values_def", fd.TYPE_MESSAGE, opt, ".tensorflow.ValuesDef"),
               (10, "loop_enter_names", fd.TYPE_STRING, rep, None),
               (11, "maximum_iterations_name", fd.TYPE_STRING, opt, None),
               (12, "nested_contexts", fd.TYPE_MESSAGE, rep,
                ".tensorflow.ControlFlowContextDef")])
    return message_classes([f], ["tensorflow.WhileContextDef"])["tensorflow.WhileContextDef"]
