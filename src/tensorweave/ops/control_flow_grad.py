"""Gradients through control flow (EuroSys 2018 §5.1-5.2).

cond: the gradient of a Merge switches the incoming gradient on the cond's predicate;
the gradient of a Switch merges the gradients of its two sides. Each runs only on the
side taken, exactly like the forward cond.

while_loop: a loop is differentiated as a whole (a `LoopNode` to tf.gradients): its
gradient is a backward while loop running as many iterations as the forward one did.
Its loop variables are an iteration counter (counting down from the forward loop's
count), the gradients of the loop variables, and accumulators for the gradients of loop
invariants. Its body is tf.gradients of the forward body, built inside the backward
loop's context; every forward value that body needs is pushed onto a stack in the
forward loop and popped in the backward loop (`GradLoopState`). Control edges keep the
order: a push runs after its iteration's counter value exists and before the counter
advances (through a ControlTrigger, which is live even when the push sits in a cond
branch not taken), pops likewise in the backward loop. Loop invariants are not pushed:
the backward loop re-enters them. Because the backward loop is an ordinary while loop,
it can itself be differentiated (second-order gradients).
"""
from __future__ import annotations

from typing import List

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import gradient
from tensorweave.ops import control_flow_ops as cf
from tensorweave.ops import resource_variable_ops

# the loops whose body is being differentiated, innermost last
_grad_frames: List[cf.WhileContext] = []


# --- cond ---------------------------------------------------------------------------------


@gradient("Merge")
def _merge_grad(op: Operation, grad, _):
    info = op._graph._cond_merges.get(op)
    if info is None:
        raise LookupError("Merge %s is not the output of a tf.cond; loops built from raw "
                          "primitives cannot be differentiated (use tf.while_loop)." % op.name)
    pred = info[0]
    g_false, g_true = cf.switch(grad, pred)
    ctx = op._graph._get_control_flow_context()
    if isinstance(ctx, cf.WhileContext) and ctx.forward is not None:
        # pops of forward values from this cond's branches run only on the side taken
        # (through Identity pivots: a control edge carries its source's liveness, and
        # only an Identity has the liveness of one Switch side)
        ctx.cond_pivots[(pred, 0)] = cf._identity(g_false, "pivot_f")
        ctx.cond_pivots[(pred, 1)] = cf._identity(g_true, "pivot_t")
    if len(op.inputs) != 2:
        return [g_true if i == 1 else g_false for i in range(len(op.inputs))]
    return [g_false, g_true]


@gradient("Switch")
def _switch_grad(op: Operation, g_false, g_true):
    from tensorweave.ops import array_ops
    if g_false is None and g_true is None:
        return [None, None]
    # zeros that are dead exactly when their side is not taken: computed from a new
    # switch of the input (in a backward loop the input and predicate are popped, live
    # in every iteration, rather than the forward side, which exists only when taken)
    if g_false is None:
        g_false = array_ops.zeros_like(cf.switch(op.inputs[0], op.inputs[1])[0],
                                       optimize=False)
    if g_true is None:
        g_true = array_ops.zeros_like(cf.switch(op.inputs[0], op.inputs[1])[1],
                                      optimize=False)
    from tensorweave.framework.op_builder import convert_to_tensor
    m, _ = cf.merge([convert_to_tensor(g_false), convert_to_tensor(g_true)])
    return [m, None]


def _no_gradient_outside_loop(op, *grads):
    raise LookupError("%s (%s) is differentiated as part of its whole while loop; it "
                      "cannot be differentiated alone (build loops with tf.while_loop)."
                      % (op.name, op.type))


for _t in ("Enter", "Exit", "NextIteration"):
    gradient(_t)(_no_gradient_outside_loop)


# --- while loops --------------------------------------------------------------------------


class LoopNode:
    """A whole while loop as one node of tf.gradients: inputs are the values entering
    it (initial loop variables and invariants), outputs its Exit values."""

    _gradient_override = None
    _type = "While"

    def __init__(self, ctx: cf.WhileContext):
        self.ctx = ctx
        self.enter_ops = list(ctx.enter_ops)
        self._inputs = [op._inputs[0] for op in self.enter_ops]
        self._outputs = list(ctx.exits)
        self._id = max(t._op._id for t in self._outputs)
        self._name = ctx.name
        self._control_inputs: list = []

    def __repr__(self):
        return "<LoopNode %s>" % self._name

    def grad_fn(self, node, *exit_grads):
        return _while_grad(self, list(exit_grads))


def node_of(op: Operation):
    """`op`, or the LoopNode of the outermost loop containing it below the loop whose
    body is being differentiated now."""
    loop = cf.enclosing_loop(op._control_flow_context)  # Enter/Exit: their own loop
    if loop is None:
        return op
    cur = _grad_frames[-1] if _grad_frames else None
    if loop is cur:
        return op
    chain = []
    x = loop
    while x is not None and x is not cur:
        chain.append(x)
        x = cf.enclosing_loop(x.outer)
    if x is not cur:
        return op  # outside the loop being differentiated
    top = chain[-1]
    if getattr(top, "forward", None) is not None and not top.exits:
        return op
    node = top.__dict__.get("_loop_node")
    if node is None or len(node.enter_ops) != len(top.enter_ops):  # gradients add Enters
        node = top._loop_node = LoopNode(top)
    return node


def _differentiable(t: Tensor) -> bool:
    """Floating values, and handles of variables (their reads are differentiable)."""
    d = t._dtype.base_dtype
    if d is _dt.resource:
        return resource_variable_ops.handle_source(t)._op._type == "VarHandleOp"
    return d.is_floating or d.is_complex


def forward_counter(loop: cf.WhileContext):
    """The forward loop's iteration count (its Exit), adding a counter loop variable
    and the ControlTrigger that orders stack pushes on first use."""
    if getattr(loop, "counter_exit", None) is not None:
        return loop.counter_exit
    from tensorweave.ops import constant_op
    g = loop.graph
    saved = g._get_control_flow_context()
    g._set_control_flow_context(loop.outer)
    try:
        zero = constant_op.constant(0, name="f_count/init")
    finally:
        g._set_control_flow_context(saved)
    e = cf.enter(zero, loop, is_constant=False, name="f_count")
    g._set_control_flow_context(loop)
    try:
        m, _ = cf.merge([e, e], name="f_count/Merge")
        sw = cf.switch(m, loop.pred, name="f_count/Switch")
        ident = cf._identity(sw[1], "f_count/Identity")
        sync = apply_op("ControlTrigger", [], name="f_count/sync")
        sync._add_control_input(ident._op)
        with g.control_dependencies([sync]):
            nxt_val = apply_op("AddV2", [ident, constant_op.constant(1, name="f_count/one")],
                               name="f_count/add")._outputs[0]
        nxt = apply_op("NextIteration", [nxt_val], name="f_count/NextIteration")._outputs[0]
        m._op._update_input(1, nxt)
        loop.counter_exit = apply_op("Exit", [sw[0]], name="f_count/Exit")._outputs[0]
    finally:
        g._set_control_flow_context(saved)
    loop.counter_ident = ident
    loop.push_sync = sync
    loop.stacks = {}
    return loop.counter_exit


def push_forward_value(loop: cf.WhileContext, t: Tensor) -> Tensor:
    """The stack handle (in the loop's outer context) holding `t` of every iteration."""
    st = loop.stacks.get(t)
    if st is not None:
        return st
    from tensorweave.ops import stack_ops
    g = loop.graph
    saved = g._get_control_flow_context()
    g._set_control_flow_context(loop.outer)
    try:
        with g.control_dependencies(None):
            handle = stack_ops.stack_v2(-1, t.dtype.base_dtype,
                                        stack_name=t._op._name + "_stack")
    finally:
        g._set_control_flow_context(loop)
    try:
        with g.control_dependencies(None), g.control_dependencies([loop.counter_ident]):
            push = stack_ops.stack_push_v2(handle, t, swap_memory=loop.swap_memory)
    finally:
        g._set_control_flow_context(saved)
    loop.push_sync._add_control_input(push._op)
    loop.stacks[t] = handle
    return handle


def pop_forward_value(bw: cf.WhileContext, t: Tensor) -> Tensor:
    """`t` of the forward iteration matching the current backward one (bw's context)."""
    from tensorweave.ops import stack_ops
    loop = bw.forward
    handle = push_forward_value(loop, t)
    g = bw.graph
    guard = bw.pivot
    if t._op._type == "Switch":  # a value captured into a cond branch
        p = bw.cond_pivots.get((t._op._inputs[1], t._value_index))
        if p is not None:
            guard = p
    cond_ctx = t._op._control_flow_context
    while guard is bw.pivot and cond_ctx is not None and \
            not isinstance(cond_ctx, cf.WhileContext):
        if isinstance(cond_ctx, cf.CondContext):
            p = bw.cond_pivots.get((cond_ctx.pred, cond_ctx.branch))
            if p is not None:
                guard = p
                break
        cond_ctx = cond_ctx.outer
    saved = g._get_control_flow_context()
    g._set_control_flow_context(bw)
    try:
        with g.control_dependencies(None), g.control_dependencies([guard]):
            v = stack_ops.stack_pop_v2(handle, t.dtype.base_dtype,
                                       name=t._op._name.rsplit("/", 1)[-1] + "_pop")
    finally:
        g._set_control_flow_context(saved)
    v.set_shape(t.shape)
    bw.pops.append(v._op)
    return v


def _zeros_for(t: Tensor) -> Tensor:
    """Zeros to accumulate the gradient of loop invariant `t` (a variable's value for a
    resource handle)."""
    from tensorweave.ops import array_ops, resource_variable_ops
    if t._dtype is _dt.resource:
        h = resource_variable_ops.handle_source(t)
        value = resource_variable_ops.read_variable_op(t, h._op.get_attr("dtype"))
        return array_ops.zeros_like(value)
    return array_ops.zeros_like(t)


def _dense(g):
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.op_builder import convert_to_tensor
    if isinstance(g, IndexedSlices):  # an embedding lookup's gradient, accumulated densely
        from tensorweave.ops import segment_ops
        return segment_ops.unsorted_segment_sum(g.values, g.indices, g.dense_shape[0])
    return convert_to_tensor(g)


def _like(d, g: Tensor) -> Tensor:
    """`d` as a dense tensor carrying the static shape of `g` (a gradient has the shape
    of its value, which the loop's shape invariant needs)."""
    d = _dense(d)
    if d.shape.is_compatible_with(g.shape):
        d.set_shape(g.shape)
    return d


def _while_grad(node: LoopNode, exit_grads: list) -> list:
    loop = node.ctx
    if not loop.back_prop:
        return [None] * len(node._inputs)
    if loop.forward is not None:
        # The backward loop reads forward values from stacks; differentiating it would
        # need the pops' own gradients (pushes of the second-order loop). Until then,
        # refuse rather than return a derivative missing those paths.
        raise LookupError(
            "Second-order gradients through tf.while_loop (differentiating the backward "
            "loop %s) are not supported yet." % loop.name)
    from tensorweave.autodiff.gradients import gradients
    from tensorweave.ops import array_ops
    n_vars = len(loop.enters)
    var_idx = [k for k in range(n_vars) if _differentiable(loop.exits[k])]
    inv_pos = [k for k, op in enumerate(node.enter_ops) if op._attrs.get("is_constant")
               and _differentiable(op._outputs[0])]
    count = forward_counter(loop)
    gs0 = [exit_grads[k] if exit_grads[k] is not None
           else array_ops.zeros_like(loop.exits[k]) for k in var_idx]
    from tensorweave.framework.op_builder import convert_to_tensor
    gs0 = [convert_to_tensor(g) for g in gs0]
    accs0 = [_zeros_for(node._inputs[k]) for k in inv_pos]
    inv_enters = [node.enter_ops[k]._outputs[0] for k in inv_pos]
    n_g = len(gs0)

    def body(j, *rest):
        bw = loop.graph._get_control_flow_context()
        gs, accs = list(rest[:n_g]), list(rest[n_g:])
        _grad_frames.append(loop)
        try:
            xs = [loop.body_inputs[k] for k in var_idx] + inv_enters
            # the body's inputs bound the walk (behind them is the loop machinery)
            # (scope "body_grad", not "gradients...": TensorArray gradients name their
            # gradient arrays after the enclosing "gradients" scope, which must stay the
            # one of the user's tf.gradients call)
            dx = gradients([loop.body_outputs[k] for k in var_idx], xs, grad_ys=gs,
                           stop_gradients=xs, name="body_grad")
        finally:
            _grad_frames.pop()
        new_gs = [_like(d, g) if d is not None else array_ops.zeros_like(g)
                  for d, g in zip(dx[:n_g], gs)]
        new_accs = [_like(a + _dense(d), a) if d is not None else a
                    for a, d in zip(accs, dx[n_g:])]
        sync = apply_op("ControlTrigger", [], name="b_sync")
        for p in bw.pops:
            sync._add_control_input(p)
        with loop.graph.control_dependencies([sync]):
            j_next = j - 1
        return [j_next] + new_gs + new_accs

    out = cf.while_loop(lambda j, *rest: j > 0, body, [count] + gs0 + accs0,
                        parallel_iterations=loop.parallel_iterations,
                        swap_memory=loop.swap_memory,
                        name=loop.name.rsplit("/", 1)[-1] + "_grad",
                        return_same_structure=True, _grad_of=loop)
    grads: list = [None] * len(node._inputs)
    for k, g in zip(var_idx, out[1:1 + n_g]):
        grads[k] = g
    for k, g in zip(inv_pos, out[1 + n_g:]):
        grads[k] = g
    return grads
