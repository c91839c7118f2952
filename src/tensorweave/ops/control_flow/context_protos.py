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

Left out (not written): a loop whose body holds a tf.cond. TF would need the cond's own
CondContextDef nested in the loop's, which this module does not write; TensorFlow then
imports the graph as before, without that loop's context.
"""
from __future__ import annotations

import functools
from typing import Dict, List, Optional

from tensorweave.ops.control_flow import control_flow_ops as cf


def while_context_defs(graph, export_scope: Optional[str] = None) -> List[bytes]:
    """The serialized WhileContextDef of each outermost while loop of `graph` that can
    be written (see the module docstring), names relative to `export_scope`."""
    members: Dict[int, list] = {}
    has_cond = set()
    for op in graph.get_operations():
        ctx = op._control_flow_context
        if isinstance(ctx, cf.WhileContext):
            members.setdefault(id(ctx), []).append(op)
        elif isinstance(ctx, cf.CondContext):
            while ctx is not None and not isinstance(ctx, cf.WhileContext):
                ctx = ctx.outer
            if ctx is not None:
                has_cond.add(id(ctx))
    loops = [c for c in graph._while_contexts if c.pred is not None and c.exits]
    children: Dict[int, list] = {}
    for c in loops:
        if isinstance(c.outer, cf.WhileContext):
            children.setdefault(id(c.outer), []).append(c)
    message = _messages()

    def blocked(ctx) -> bool:  # a cond somewhere in it or in a loop nested in it
        return id(ctx) in has_cond or any(blocked(c) for c in children.get(id(ctx), ()))

    def fill(proto, ctx) -> bool:
        names = [_strip(t.name, export_scope) for t in
                 [ctx.pred, ctx.merges[0], ctx.pivot] + list(ctx.exits) + list(ctx.enters)]
        if any(n is None for n in names):
            return False
        proto.context_name = _strip(ctx.name, export_scope) or ctx.name
        proto.parallel_iterations = ctx.parallel_iterations
        proto.back_prop = bool(ctx.back_prop)
        proto.swap_memory = bool(ctx.swap_memory)
        proto.pivot_name, proto.pivot_for_pred_name, proto.pivot_for_body_name = names[:3]
        proto.loop_exit_names.extend(names[3:3 + len(ctx.exits)])
        proto.loop_enter_names.extend(names[3 + len(ctx.exits):])
        values = set()
        for op in members.get(id(ctx), ()):
            values.update(t.name for t in op._outputs)
        for child in children.get(id(ctx), ()):  # a nested loop's results live here
            values.update(t.name for t in child.exits)
        for e in ctx.enter_ops:  # the loop invariants, as TF's AddValue records them:
            if e._attrs.get("is_constant"):  # keyed by the tensor outside every loop
                outer, inner = _outside_loops(e._inputs[0]).name, e._outputs[0].name
                values.add(outer)
                proto.values_def.external_values[_strip(outer, export_scope) or outer] = \
                    _strip(inner, export_scope) or inner
        proto.values_def.values.extend(sorted(
            v for v in (_strip(n, export_scope) for n in values) if v is not None))
        for child in children.get(id(ctx), ()):
            if not fill(proto.nested_contexts.add().while_ctxt, child):
                return False
        return True
    out = []
    for ctx in loops:
        if isinstance(ctx.outer, cf.WhileContext) or blocked(ctx):
            continue
        proto = message()
        if fill(proto, ctx):
            out.append(proto.SerializeToString())
    return out


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
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
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
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    desc = pool.FindMessageTypeByName("tensorflow.WhileContextDef")
    get = getattr(message_factory, "GetMessageClass", None)
    return get(desc) if get is not None else \
        message_factory.MessageFactory(pool).GetPrototype(desc)
