"""Control-flow contexts of imported graphs, so that tf.gradients works through them.

A graph built here records each tf.while_loop as a WhileContext (its Enter, Merge,
Switch, Identity, NextIteration and Exit tensors, every op's `_control_flow_context`)
and each tf.cond's Merge with its predicate (`Operation._cond_pred`); the gradient
code (control_flow_grad.py) reads them. A GraphDef carries only the ops, so after
`import_graph_def` (and `import_meta_graph`, which TF1 serves from its WHILE_CONTEXT and
COND_CONTEXT collections) `rebuild_contexts` recovers them from the graph's structure,
which TF's while_loop and cond build exactly as ours do:

    Enter(x, frame_name) -> Merge(Enter, NextIteration) -> Switch(Merge, LoopCond)
        -> Identity(Switch:1) (the body's input; the first is the loop's pivot)
        -> ... -> NextIteration;  Exit(Switch:0) leaves the loop
    cond: Switch(x, pred_id)[branch] -> ... -> Identity -> Merge(false, true)

An op belongs to the frame of its first data input (an Enter's output is in the
Enter's frame, an Exit's in the parent's), or of its first control input. A frame that
does not have this shape (raw control-flow primitives, a pruned loop, the backward loop
TF's gradients built) gets no context, nor do the frames nested in it: those loops stay
non-differentiable, as before; the others of the graph differentiate.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from tensorweave.framework.graph import Operation, Tensor
from tensorweave.ops.control_flow import control_flow_ops as cf

_ENTERS = ("Enter", "RefEnter")
_EXITS = ("Exit", "RefExit")
_MERGES = ("Merge", "RefMerge")
_NEXTS = ("NextIteration", "RefNextIteration")


def rebuild_contexts(graph, ops: List[Operation]) -> None:
    """Gives the imported `ops` (in creation order: inputs first, loop back edges
    aside) their while-loop contexts and the cond Merges their predicates."""
    if not any(op._type in _ENTERS or op._type in _MERGES for op in ops):
        return
    before = {id(op): op._control_flow_context for op in ops}
    contexts = _assign_frames(graph, ops)
    failed = {id(ctx) for ctx, members in contexts if not _fill_loop(ctx, members)}
    for ctx, members in contexts:
        if _within(ctx, failed):
            # not a tf.while_loop's shape (or inside such a frame): its ops get no
            # context, as before this module, so nothing half-built reaches the
            # gradient code; the other loops of the graph keep theirs
            for op in members:
                op._control_flow_context = before[id(op)]
        else:
            graph._while_contexts.append(ctx)
            graph._has_while = True
    for op in ops:
        if op._type in _MERGES and op._cond_pred is None and len(op._inputs) == 2 and \
                op._inputs[1]._op._type not in _NEXTS:
            op._cond_pred = _cond_predicate(op)


def _within(ctx, failed: set) -> bool:
    """Whether `ctx` or a loop it is nested in is one of the `failed` frames."""
    while isinstance(ctx, cf.WhileContext):
        if id(ctx) in failed:
            return True
        ctx = ctx.outer
    return False


def _context_of(t: Tensor):
    """The WhileContext the value `t` lives in (None: outside every loop)."""
    op = t._op
    ctx = op._control_flow_context
    if op._type in _EXITS and isinstance(ctx, cf.WhileContext):
        return ctx.outer
    return ctx if isinstance(ctx, cf.WhileContext) else None


def _assign_frames(graph, ops: List[Operation]) -> list:
    """Makes a WhileContext per (parent context, frame_name) of the Enters and sets
    `_control_flow_context` of every imported op in a loop; [(context, its ops)]."""
    made: Dict[tuple, cf.WhileContext] = {}
    members: Dict[int, list] = {}
    for op in ops:
        data = [t for t in op._inputs if not (op._type in _MERGES and
                                              t._op._type in _NEXTS)]
        if op._type in _ENTERS:
            parent = _context_of(data[0])
            key = (id(parent), op._attrs["frame_name"])
            ctx = made.get(key)
            if ctx is None:
                with cf.building_in(graph, parent):
                    ctx = cf.WhileContext(graph, op._attrs["frame_name"],
                                          int(op._attrs.get("parallel_iterations", 10)),
                                          back_prop=True, swap_memory=False)
                made[key] = ctx
                members[id(ctx)] = []
            ctx.enter_ops.append(op)
        elif data:
            ctx = _context_of(data[0])
        elif op._control_inputs:
            ctx = _context_of(op._control_inputs[0]._outputs[0]) \
                if op._control_inputs[0]._outputs else \
                op._control_inputs[0]._control_flow_context
        else:
            ctx = None
        if isinstance(ctx, cf.WhileContext):
            op._control_flow_context = ctx
            members.setdefault(id(ctx), []).append(op)
    return [(ctx, members[id(ctx)]) for ctx in made.values()]


def _fill_loop(ctx: cf.WhileContext, members: List[Operation]) -> bool:
    """Sets the tensors of `ctx` from its ops (see the module docstring); False when the
    frame does not have a tf.while_loop's shape."""
    conds = [op for op in members if op._type == "LoopCond"]
    if len(conds) != 1:
        return False
    pred = conds[0]._outputs[0]
    switches = [op for op in members if op._type in ("Switch", "RefSwitch") and
                op._inputs[1] is pred]
    merges, enters, body_inputs, body_outputs, exits = [], [], [], [], []
    for sw in switches:
        m = sw._inputs[0]
        if m._op._type not in _MERGES or len(m._op._inputs) != 2 or \
                m._op._inputs[0]._op._type not in _ENTERS or \
                m._op._inputs[1]._op._type not in _NEXTS:
            return False
        ident = [c for c in sw._outputs[1].consumers() if c._type == "Identity"]
        exit_ops = [c for c in sw._outputs[0].consumers() if c._type in _EXITS]
        if len(exit_ops) != 1 or (not ident and not merges):
            return False
        merges.append(m)
        enters.append(m._op._inputs[0])
        # a counter TF's gradients added to the loop reads its Switch directly
        body_inputs.append(ident[0]._outputs[0] if ident else sw._outputs[1])
        body_outputs.append(m._op._inputs[1]._op._inputs[0])
        exits.append(exit_ops[0]._outputs[0])
    if not switches:
        return False
    ctx.pred, ctx.merges, ctx.enters = pred, merges, enters
    ctx.switches = [(sw._outputs[0], sw._outputs[1]) for sw in switches]
    ctx.body_inputs, ctx.body_outputs, ctx.exits = body_inputs, body_outputs, exits
    ctx.pivot = body_inputs[0]
    for e in ctx.enter_ops:
        if e._attrs.get("is_constant"):
            outer_t, inner_t = e._inputs[0], e._outputs[0]
            ctx.invariants[outer_t] = inner_t
            ctx._values[outer_t] = inner_t
            ctx._values[inner_t] = inner_t
    return True


def _cond_predicate(merge: Operation) -> Optional[Tensor]:
    """The predicate a cond's Merge chooses by: the Switch guarding its false input on
    output 0 and its true input on output 1 (walking back over data and control edges
    to the nearest Switch that is not a loop's); None when the two disagree."""
    found = []
    for want, edge in ((0, merge._inputs[0]), (1, merge._inputs[1])):
        start = edge._op
        if start._type in ("Switch", "RefSwitch") and \
                start._inputs[1]._op._type != "LoopCond":
            # a branch that returns an outside value unchanged: the Switch feeds the
            # Merge directly
            found.append(start._inputs[1] if edge._value_index == want else None)
            continue
        seen, frontier, hit = set(), [start], None
        while frontier and hit is None:
            nxt = []
            for op in frontier:
                if id(op) in seen:
                    continue
                seen.add(id(op))
                for t in op._inputs:
                    src = t._op
                    if src._type in ("Switch", "RefSwitch") and \
                            src._inputs[1]._op._type != "LoopCond":
                        if t._value_index == want:
                            hit = src._inputs[1]
                            break
                        continue
                    nxt.append(src)
                if hit is not None:
                    break
                nxt.extend(op._control_inputs)
            frontier = nxt
        found.append(hit)
    if found[0] is None or found[1] is None:
        return None
    return found[1]
