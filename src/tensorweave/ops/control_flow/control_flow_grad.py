"""Gradients through while loops (EuroSys 2018 §5.2); a cond's (Switch and Merge) are in
cond_grad.py.

while_loop: a loop is differentiated as a whole (a `LoopNode` to tf.gradients): its
gradient is a backward while loop running as many iterations as the forward one did.
Its loop variables are an iteration counter (counting down from the forward loop's
count), the gradients of the loop variables, and accumulators for the gradients of loop
invariants. Its body is tf.gradients of the forward body, built inside the backward
loop's context; every forward value that body needs is pushed onto a stack in the
forward loop and popped in the backward loop (one stack per value and backward loop).
Control edges keep the order: a push runs after its iteration's counter value exists
and before the counter advances (through a ControlTrigger, which is live even when the
push sits in a cond branch not taken), pops likewise in the backward loop. Loop
invariants are not pushed: the backward loop re-enters them. A loop nested in another
pushes the values of all its runs onto the same stacks, made outside both loops as TF
makes them (`_stack_home`); its next run starts counting only after the outer counter
has seen this run's pushes, and the outer backward loop's counter waits for each run of
the inner backward loop, so the runs push, and pop, one after another.

Gradients of gathers (IndexedSlices) stay sparse, as in TF, so optimizers update only
the rows read: a backward loop carries an IndexedSlices gradient of a loop variable as
its components, and accumulates that of a loop invariant by concatenation, from one zero row at index 0 as TF's accumulator does,
in loop variables added to the built backward loop (`_accumulate_slices`).

Higher-order gradients (TF1 could not): a backward loop is an ordinary while loop, so
it is differentiated the same way, except that its pops are inputs too. The gradient
of a pop, computed per iteration in the backward loop's own backward loop, is pushed
onto a gradient stack; that loop runs in the pushing loop's order, so the pushing
loop's next backward loop pops the gradients in its own order and adds each to the
gradient of the value that was pushed. tf.gradients meets the popping loop first (it
consumes the pushing loop's iteration count), so the gradients are pushed by the time
the pushing loop is differentiated. A loop nested in another runs once per outer
iteration, so its gradient stacks are made per outer iteration too and their handles
travel between the outer backward loops the same way (`_push_gradient`). Not supported
(TypeError, TF's class for the higher-order loop gradients it lacks): nesting more than one
deep, and values inside a tf.cond in the loop.

State: what one gradient computation shares (the backward loop being built, the LoopNodes,
pushed gradients waiting for their loop) is its GradientCall (autodiff/gradient_call.py),
passed to the gradient functions here that declare `needs_call=True`; what describes the
graph is recorded on it: a cond's Merge carries its predicate, a forward loop lists its
backward loops, and a backward loop's WhileContext holds its BackwardLoop record.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from tensorweave.autodiff.gradient_call import GradientCall
from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices, static_dense_shape
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import gradient
from tensorweave.ops.control_flow import control_flow_ops as cf
from tensorweave.ops.state import resource_variable_ops


def _no_gradient_outside_loop(op, *grads):
    loop = cf.enclosing_loop(op._control_flow_context)
    if op._type == "Enter" and loop is not None and not loop.exits and \
            loop.grad_state is None:
        # tf.gradients called in the body of a loop being built reaches a value from
        # outside the loop: its gradient, one per iteration, flows on to the outside
        # ops, whose gradients are built in the body too (TF's _EnterGrad)
        return [grads[0]]
    raise LookupError("%s (%s) is differentiated as part of its whole while loop; it "
                      "cannot be differentiated alone (build loops with tf.while_loop)."
                      % (op.name, op.type))


for _t in ("Enter", "Exit", "NextIteration"):  # Enter: see the exception above
    gradient(_t)(_no_gradient_outside_loop)


# --- while loops --------------------------------------------------------------------------


class LoopNode:
    """A whole while loop as one node of tf.gradients: inputs are the values entering
    it (initial loop variables and invariants), outputs its Exit values. Made per
    GradientCall (`node_of`)."""

    _gradient_override = None
    _type = "While"

    def __init__(self, ctx: cf.WhileContext):
        self.ctx = ctx
        self.enter_ops = list(ctx.enter_ops)
        self._inputs = [op._inputs[0] for op in self.enter_ops]
        # the iteration count (once gradients added it) links the loop to its backward
        # loops, which second-order gradients must find on paths from xs
        self._outputs = list(ctx.exits) + [b.counter.exit for b in ctx.backward_loops]
        self._id = max(t._op._id for t in self._outputs)
        self._name = ctx.name
        self._control_inputs: list = []

    def __repr__(self):
        return "<LoopNode %s>" % self._name

    def grad_fn(self, node, *exit_grads, call: GradientCall) -> list:
        return _while_grad(self, list(exit_grads), call)

    def has_pending_grads(self, call: GradientCall) -> bool:
        """Whether `call` has gradients of the loop's pushed values waiting (from the
        second-order loop of its backward loop) even if its outputs have none."""
        return self.ctx in call.pushed_grads


def node_of(op: Operation, call: GradientCall):
    """`op`, or the LoopNode of the outermost loop containing it below the loop whose
    body `call` is differentiating now."""
    loop = cf.enclosing_loop(op._control_flow_context)  # Enter/Exit: their own loop
    if loop is None:
        return op
    cur = call.frame
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
    if not top.exits:
        # a loop still being built: a backward loop, or the forward loop whose body
        # calls tf.gradients (tf.hessians' loop over the gradient's elements)
        return op
    node = call.loop_nodes.get(top)
    if node is None or len(node.enter_ops) != len(top.enter_ops):  # gradients add Enters
        node = call.loop_nodes[top] = LoopNode(top)
    return node


def _differentiable(t: Tensor) -> bool:
    """Floating values, handles of variables (their reads are differentiable) and
    TensorLists (variants whose gradient is a list)."""
    d = t._dtype.base_dtype
    if d is _dt.resource:
        return resource_variable_ops.handle_source(t)._op._type == "VarHandleOp"
    if d is _dt.variant:
        from tensorweave.ops.data_flow.list_ops import static_list
        return static_list(t)[0] is not None
    return d.is_floating or d.is_complex


class ForwardCounter:
    """An iteration counter loop variable of a forward loop, made for one backward loop:
    `exit` is the iteration count, `ident` the count inside an iteration (pushes wait for
    it), `sync` a ControlTrigger after the iteration's pushes that the count's increment
    waits for, `stacks` the stack handle of each value pushed for that backward loop.
    One counter per backward loop, so a step that runs one gradient does not push the
    values another gradient of the same loop would pop (they are pruned with it)."""

    __slots__ = ("exit", "ident", "sync", "stacks")

    def __init__(self, exit_: Tensor, ident: Tensor, sync: Operation):
        self.exit, self.ident, self.sync = exit_, ident, sync
        self.stacks: dict = {}


class BackwardLoop:
    """A backward loop as gradients record it: its WhileContext's `grad_state`, and an
    entry of its forward loop's `backward_loops`. It describes the graph, so it outlives
    the tf.gradients call that built the loop: the gradients of the loop, built in later
    calls, read it.

    Fields:
      forward: the loop it differentiates.
      counter: the ForwardCounter added to `forward` for it (the count it counts down,
        and the stacks `forward` pushes its values on for it).
      loop: its own WhileContext (set by while_loop as soon as the loop exists).
      pops: the pops made in it; its iteration counter waits for them.
      nested_done: the counter exits of the backward loops nested in it whose forward
        loops push onto stacks shared by all their runs (_stack_home): its counter waits
        for them too, so one run pops only after the run before it has finished.
      cond_pivots: (forward cond's predicate, branch) -> a backward pivot live exactly
        in the iterations that took that side: pops of values from that side wait for it.
      popped: pop output -> (the loop that pushed it, the pushed value): forward values,
        and in higher-order gradients the gradients pushed by another backward loop.
      handle_pushes, handles_for, received_handles: as the loop holding the backward
        loops of nested loops (higher-order gradients): pushes of the handles of their
        gradient stacks, the loops that pop those handles, and handle stack -> the
        handle popped from it here.
    """

    __slots__ = ("forward", "counter", "loop", "pops", "nested_done", "cond_pivots",
                 "popped", "handle_pushes", "handles_for", "received_handles")

    def __init__(self, forward: cf.WhileContext, counter: "ForwardCounter"):
        self.forward = forward
        self.counter = counter
        self.loop: Optional[cf.WhileContext] = None
        self.pops: List[Operation] = []
        self.nested_done: List[Operation] = []
        self.cond_pivots: Dict[tuple, Tensor] = {}
        self.popped: Dict[Tensor, tuple] = {}
        self.handle_pushes: List[Operation] = []
        self.handles_for: List[cf.WhileContext] = []
        self.received_handles: Dict[Tensor, Tensor] = {}

    def __repr__(self):
        return "<BackwardLoop of %s>" % self.forward.name

    def pop_forward_value(self, t: Tensor) -> Tensor:
        """`t`, a value of the forward loop, of the forward iteration matching the current
        backward one (WhileContext.resolve, in this loop's context)."""
        v = _pop(self, t, _push_forward_value(self, t), "_pop")
        self.popped[v] = (self.forward, t)
        return v


def forward_counter(loop: cf.WhileContext,
                    enclosing: Optional["BackwardLoop"] = None) -> ForwardCounter:
    """A new counter loop variable of `loop` (see ForwardCounter). `enclosing`: the
    backward loop being built around this one's, if any."""
    from tensorweave.ops.array import constant_op
    g = loop.graph
    with cf.building_in(g, loop.outer):
        zero = constant_op.constant(0, name="f_count/init")
    if enclosing is not None and enclosing.forward is cf.enclosing_loop(loop.outer):
        # A loop nested in the forward loop of `enclosing` pushes onto the same stacks in
        # every run (see _stack_home): its run in the next outer iteration starts counting
        # only once this one's pushes are done (the outer counter waits for them), as TF
        # orders them.
        zero._op._add_control_input(enclosing.counter.ident._op)
    e = cf.enter(zero, loop, is_constant=False, name="f_count")
    with cf.building_in(g, loop):
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
        count = apply_op("Exit", [sw[0]], name="f_count/Exit")._outputs[0]
    return ForwardCounter(count, ident, sync)


def _push_forward_value(bw: BackwardLoop, t: Tensor) -> Tensor:
    """The stack handle (in the forward loop's outer context) holding `t` of every
    iteration for the backward loop `bw` (each backward loop pops its own stacks)."""
    loop, counter = bw.forward, bw.counter
    st = counter.stacks.get(t)
    if st is not None:
        return st
    handle, push = _new_stack_push(_stack_home(bw), loop, t, t._op._name + "_stack",
                                   counter.ident, loop.swap_memory)
    counter.sync._add_control_input(push)
    counter.stacks[t] = handle
    return handle


def _stack_home(bw: BackwardLoop):
    """The context to make the stacks of `bw`'s forward values in: outside the forward
    loop, and outside every forward loop around it whose backward loop holds `bw`, as
    TF makes them (in the context of the tf.gradients call). A loop nested in another
    thus pushes the values of all its runs onto one stack, entered into both loops, and
    its backward loop, which runs in reverse outer order, pops them all from there (no
    stack per outer iteration whose handle would itself be stacked: TF's Grappler drops
    pushes onto a stack it sees no pop of, and would drop those of such a handle)."""
    home = bw.forward.outer
    while True:
        around = cf.enclosing_loop(home)
        host = cf.enclosing_loop(bw.loop.outer)
        hosting = host.grad_state if host is not None else None
        if around is None or hosting is None or hosting.forward is not around:
            return home
        home, bw = around.outer, hosting


def _pop(bw: BackwardLoop, t: Tensor, handle: Tensor, suffix: str) -> Tensor:
    """A pop from `handle` in the backward loop `bw`, of the value (or gradient) of the
    forward value `t`: guarded like `t` (only on the cond side taken) and ordered with
    the iteration counter by the backward loop's sync."""
    from tensorweave.ops.data_flow import stack_ops
    loop = bw.loop
    g = loop.graph
    guard = loop.pivot
    if t._op._type == "Switch":  # a value captured into a cond branch
        p = bw.cond_pivots.get((t._op._inputs[1], t._value_index))
        if p is not None:
            guard = p
    cond_ctx = t._op._control_flow_context
    while guard is loop.pivot and cond_ctx is not None and \
            not isinstance(cond_ctx, cf.WhileContext):
        if isinstance(cond_ctx, cf.CondContext):
            p = bw.cond_pivots.get((cond_ctx.pred, cond_ctx.branch))
            if p is not None:
                guard = p
                break
        cond_ctx = cond_ctx.outer
    with cf.building_in(g, loop), g.control_dependencies(None), \
            g.control_dependencies([guard]):
        v = stack_ops.stack_pop_v2(handle, t.dtype.base_dtype,
                                   name=t._op._name.rsplit("/", 1)[-1] + suffix)
    v.set_shape(t.shape)
    bw.pops.append(v._op)
    return v


def _zeros_for(t: Tensor) -> Tensor:
    """Zeros to accumulate the gradient of loop invariant `t` (a variable's value for a
    resource handle)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.state import resource_variable_ops
    if t._dtype is _dt.resource:
        h = resource_variable_ops.handle_source(t)
        value = resource_variable_ops.read_variable_op(t, h._op._get_attr("dtype"))
        return array_ops.zeros_like(value)
    return array_ops.zeros_like(t)


def _dense(g):
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.op_builder import convert_to_tensor
    if isinstance(g, IndexedSlices):  # an embedding lookup's gradient, accumulated densely
        from tensorweave.ops.math import segment_ops
        return segment_ops.unsorted_segment_sum(g.values, g.indices, g.dense_shape[0])
    return convert_to_tensor(g)


def _like(d, g: Tensor) -> Tensor:
    """`d` as a dense tensor carrying the static shape of `g` (a gradient has the shape
    of its value, which the loop's shape invariant needs)."""
    d = _dense(d)
    if d.shape.is_compatible_with(g.shape):
        d.set_shape(g.shape)
    return d


def _components(g, like=None) -> list:
    """The tensors a gradient laid out like `like` (default: itself) travels through a
    loop as: itself, or an IndexedSlices' values, indices and dense shape (unless that
    is known at build time: then it is the same in every iteration)."""
    like = g if like is None else like
    if not isinstance(like, IndexedSlices):
        return [g]
    keep = like.dense_shape is not None and static_dense_shape(like) is None
    return [g.values, g.indices] + ([g.dense_shape] if keep else [])


def _pack_like(templates: list, flat) -> list:
    """`flat` (the `_components` of gradients laid out like `templates`) regrouped."""
    from tensorweave.ops.array.constant_op import constant
    out, i = [], 0
    for t in templates:
        n = len(_components(t))
        if isinstance(t, IndexedSlices):
            shape = flat[i + 2] if n == 3 else None
            static = static_dense_shape(t)
            if static is not None:
                shape = constant(static, dtype=t.dense_shape.dtype.base_dtype)
            out.append(IndexedSlices(flat[i], flat[i + 1], shape))
        else:
            out.append(flat[i])
        i += n
    return out


def _loop_shapes(g) -> list:
    """The shapes the loop variables holding the gradient `g` keep (`_components`): an
    IndexedSlices' values and indices change their row count from one iteration to the
    next."""
    from tensorweave.framework.shapes import TensorShape, unknown_shape
    if not isinstance(g, IndexedSlices):
        return [g.shape]
    v = g.values.shape
    rows = unknown_shape() if v.rank is None else TensorShape([None] + v.as_list()[1:])
    return [rows, TensorShape([None]), g.dense_shape.shape][:len(_components(g))]


def _next_grad(d, g):
    """The gradient `d` of a loop variable from one backward iteration, as the loop
    variable holding the gradient `g` carries it: dense like `g`, or IndexedSlices (a
    dense `d` as all its rows, TF's `_AddNextAndBackEdge`) with `g`'s index and shape
    types. None: zeros."""
    from tensorweave.ops.array import array_ops
    if not isinstance(g, IndexedSlices):
        return _like(d, g) if d is not None else array_ops.zeros_like(g)
    from tensorweave.framework.indexed_slices import as_indexed_slices
    from tensorweave.framework.op_builder import convert_to_tensor
    from tensorweave.ops.math import math_ops
    if d is None:
        return IndexedSlices(array_ops.zeros_like(g.values), g.indices, g.dense_shape)
    d = as_indexed_slices(d if isinstance(d, IndexedSlices) else convert_to_tensor(d),
                          optimize=False)
    indices = d.indices
    if indices.dtype.base_dtype is not g.indices.dtype.base_dtype:
        indices = math_ops.cast(indices, g.indices.dtype.base_dtype)
    shape = None
    if g.dense_shape is not None:
        shape = d.dense_shape if d.dense_shape is not None else g.dense_shape
        if shape.dtype.base_dtype is not g.dense_shape.dtype.base_dtype:
            shape = math_ops.cast(shape, g.dense_shape.dtype.base_dtype)
    return IndexedSlices(d.values, indices, shape)


def _accumulate_slices(loop: cf.WhileContext, d: IndexedSlices,
                       inv: Tensor) -> IndexedSlices:
    """The sum over the iterations of the backward loop `loop` of `d`, the IndexedSlices
    gradient of the loop invariant `inv` computed in its body, as IndexedSlices: values
    and indices concatenated iteration after iteration by two loop variables added to
    the built loop (TF's IndexedSlices accumulator, which likewise starts from one zero
    row at index 0). The dense shape is that of `inv` (constant across iterations)."""
    from tensorweave.framework import tensor_util
    from tensorweave.framework.graph import name_scope
    from tensorweave.framework.shapes import TensorShape, unknown_shape
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.constant_op import constant
    values, indices = d.values, d.indices
    resource = inv._dtype is _dt.resource
    value_shape = resource_variable_ops.handle_shape(inv) if resource else inv.shape

    def value_shape_tensor(out_type):  # of the variable, for a handle
        return resource_variable_ops.variable_shape(inv, out_type=out_type) if resource \
            else array_ops._shape_internal(inv, out_type=out_type)
    rows = values.shape
    if value_shape.rank is not None:  # a row of the gradient is a row of the value
        like = TensorShape([None]).concatenate(value_shape[1:])
        if rows.is_compatible_with(like):
            rows = rows.merge_with(like)
    row = rows.as_list()[1:] if rows.rank is not None else None
    with name_scope("b_acc"):
        if row is not None and None not in row:
            values0 = array_ops.zeros([1] + row, dtype=values.dtype.base_dtype)
        else:
            values0 = array_ops.zeros(
                array_ops.concat([[1], value_shape_tensor(_dt.int32)[1:]], 0),
                dtype=values.dtype.base_dtype)
        indices0 = constant([0], dtype=indices.dtype.base_dtype)
        shape = None
        if d.dense_shape is not None:
            static = tensor_util.constant_value(d.dense_shape)
            out_type = d.dense_shape.dtype.base_dtype
            shape = constant(static, dtype=out_type) if static is not None else \
                value_shape_tensor(out_type)
    acc_indices = _add_loop_variable(
        loop, indices0, TensorShape([None]),
        lambda acc: array_ops.concat([acc, indices], 0), "b_acc_indices")
    acc_values = _add_loop_variable(
        loop, values0, unknown_shape() if row is None else TensorShape([None] + row),
        lambda acc: array_ops.concat([acc, values], 0), "b_acc_values")
    return IndexedSlices(acc_values, acc_indices, shape)


def _add_loop_variable(loop: cf.WhileContext, init: Tensor, shape, next_value,
                       name: str) -> Tensor:
    """Adds a loop variable to the built while loop `loop`: starting at `init` (from the
    loop's outer context), holding `next_value(its value)` in the next iteration, kept
    to `shape`. It is recorded like the loop's own (the context's enters, merges,
    switches, body inputs and outputs, exits), so the loop is differentiable through it.
    Returns its Exit."""
    g = loop.graph
    from tensorweave.framework.graph import name_scope
    with name_scope(loop.name + "/"), name_scope(name):
        e = cf.enter(init, loop, is_constant=False, name="Enter")
        # the Enters of loop variables come first, in order (LoopNode, _while_grad)
        loop.enter_ops.remove(e._op)
        loop.enter_ops.insert(len(loop.enters), e._op)
        with cf.building_in(g, loop), g.control_dependencies(None):
            m, _ = cf.merge([e, e], name="Merge")
            m._shape = shape
            sw = cf.switch(m, loop.pred, name="Switch")
            ident = cf._identity(sw[1], "Identity")
            value = next_value(ident)
            nxt = apply_op("NextIteration", [value], name="NextIteration")._outputs[0]
            m._op._update_input(1, nxt)
            ex = apply_op("Exit", [sw[0]], name="Exit")._outputs[0]
    loop.enters.append(e)
    loop.merges.append(m)
    loop.switches.append(sw)
    loop.body_inputs.append(ident)
    loop.body_outputs.append(value)
    loop.exits.append(ex)
    return ex


def _while_grad(node: LoopNode, exit_grads: list, call: GradientCall) -> list:
    loop = node.ctx
    if not loop.back_prop:
        return [None] * len(node._inputs)
    from tensorweave.autodiff.gradients import _zeros_like_output, nested_gradients
    from tensorweave.framework.op_builder import convert_to_tensor
    own = loop.grad_state  # set when `loop` is itself a backward loop
    if own is not None and own.cond_pivots:
        # values of a backward cond exist only in the iterations that took its side,
        # and pushes of them would not line up with unconditional pops (TypeError: TF's
        # class for the second-order loop gradients it does not support)
        raise TypeError(
            "Second-order gradients through a tf.cond inside tf.while_loop %s are not "
            "supported." % own.forward.name)
    n_vars = len(loop.enters)
    var_idx = [k for k in range(n_vars) if _differentiable(loop.exits[k])]
    inv_pos = [k for k, op in enumerate(node.enter_ops) if op._attrs.get("is_constant")
               and _differentiable(op._outputs[0])]
    # gradients of this loop's pushed values, computed by the backward loops of the loops
    # that popped them (built earlier in this call: each consumes our count; a nested
    # loop's are built in nested walks, and handed over in the call they all share)
    pushed_grads, after = call.pushed_grads.pop(loop, ([], []))
    state = BackwardLoop(loop, forward_counter(loop, call.backward_loop))
    loop.backward_loops.append(state)
    count = state.counter.exit
    for j_exit in after:
        # those loops' counters exit at zero: adding them keeps the count and makes "pop
        # only after every push" a data edge, which higher-order gradients walk
        count = count + j_exit
    # the gradients of the loop variables are loop variables of the backward loop; an
    # IndexedSlices one (the gradient of a gather of the loop's output) stays sparse, as
    # its components, whose row count may change from one iteration to the next
    # inputs reaching no output that has a gradient have none (TF walks only the ops
    # between xs and ys); the others start from zeros where an output has no gradient
    unconnected = _unconnected_inputs(node, [loop.exits[k] for k in var_idx
                                             if exit_grads[k] is not None])
    if pushed_grads:
        unconnected = set()  # the gradients of pushed values reach the pushing values
    gs0 = [exit_grads[k] if exit_grads[k] is not None
           else _zeros_like_output(loop.exits[k]) for k in var_idx]
    gs0 = [g if isinstance(g, IndexedSlices) else convert_to_tensor(g) for g in gs0]
    gs0_flat = [c for g in gs0 for c in _components(g)]
    accs0 = [_zeros_for(node._inputs[k]) for k in inv_pos]
    inv_enters = [node.enter_ops[k]._outputs[0] for k in inv_pos]
    # a backward loop's pops are inputs of its body like its loop variables: their
    # gradients go back to the forward loop through stacks of gradients
    popped = own.popped if own is not None else {}
    pops = [v for v in popped if _differentiable(v)]
    n_g = len(gs0)
    grad_pushes: list = []
    sparse_accs: Dict[int, IndexedSlices] = {}  # invariant -> its IndexedSlices gradient
    # invariants the body gives no gradient (used only in the cond, or behind a
    # stop_gradient): their gradient is None, as TF's _EnterGrad gives, so optimizers
    # see an unconnected variable; their accumulator stays an unused loop variable
    no_grad: set = set()

    def body(j, *rest):
        gs, accs = _pack_like(gs0, rest[:len(gs0_flat)]), list(rest[len(gs0_flat):])
        ys = [loop.body_outputs[k] for k in var_idx]
        grad_ys = list(gs)
        for t, push, handles in pushed_grads:
            ys.append(t)
            handle = push._inputs[0]._op._inputs[0] if handles is None else \
                _received_handle(state, handles)
            v = _pop(state, t, handle, "_grad_pop")
            state.popped[v] = (push._control_flow_context, push._inputs[1])
            grad_ys.append(v)
        outer = call.backward_loop
        call.backward_loop = state
        try:
            xs = [loop.body_inputs[k] for k in var_idx] + inv_enters + pops
            # (scope "body_grad", not "gradients...": TensorArray gradients take their
            # source from the call, which stays the one of the user's tf.gradients call)
            dx = nested_gradients(call, ys, xs, grad_ys, "body_grad")
        finally:
            call.backward_loop = outer
        n_inv = len(inv_enters)
        new_gs = [c for d, g in zip(dx[:n_g], gs) for c in _components(_next_grad(d, g), g)]
        new_accs = []
        for i, (a, d) in enumerate(zip(accs, dx[n_g:n_g + n_inv])):
            if isinstance(d, IndexedSlices):
                # a gather's gradient: accumulated as IndexedSlices by loop variables
                # added once the loop is built (TF's IndexedSlices accumulator)
                sparse_accs[i] = d
                new_accs.append(a)
            elif d is None:
                no_grad.add(i)
                new_accs.append(a)
            else:
                new_accs.append(_like(a + _dense(d), a))
        for v, d in zip(pops, dx[n_g + n_inv:]):
            if d is not None:
                grad_pushes.append((v,) + _push_gradient(state, popped[v], v, d))
        sync = apply_op("ControlTrigger", [], name="b_sync")
        for p in state.pops + state.nested_done + state.handle_pushes + \
                [push for _, push, _ in grad_pushes]:
            sync._add_control_input(p)
        with loop.graph.control_dependencies([sync]):
            j_next = j - 1
        return [j_next] + new_gs + new_accs

    invariants = None
    if len(gs0_flat) != len(gs0):  # IndexedSlices components grow and shrink
        invariants = [count.shape] + [sh for g in gs0 for sh in _loop_shapes(g)] + \
            [a.shape for a in accs0]
    out = cf.while_loop(lambda j, *rest: j > 0, body, [count] + gs0_flat + accs0,
                        shape_invariants=invariants,
                        parallel_iterations=loop.parallel_iterations,
                        swap_memory=loop.swap_memory,
                        name=loop.name.rsplit("/", 1)[-1] + "_grad",
                        return_same_structure=True, _grad_state=state)
    out = [out[0]] + _pack_like(gs0, out[1:1 + len(gs0_flat)]) + \
        list(out[1 + len(gs0_flat):])
    for i, d in sorted(sparse_accs.items()):
        out[1 + n_g + i] = _accumulate_slices(state.loop, d, node._inputs[inv_pos[i]])
    enclosing = call.backward_loop
    if enclosing is not None and enclosing.forward is cf.enclosing_loop(loop.outer):
        enclosing.nested_done.append(out[0]._op)
    pushers: dict = {}
    for v, push, handles in grad_pushes:
        pusher, t = popped[v]
        pushers.setdefault(pusher, []).append((t, push, handles))
    for pusher, items in pushers.items():
        entry = call.pushed_grads.setdefault(pusher, ([], []))
        entry[0].extend(items)
        if cf.enclosing_loop(pusher.outer) is None:
            entry[1].append(out[0])
    # the loops that pop the gradient-stack handles this loop pushed wait for it; the
    # pushing loops nested in them wait through them
    for dest in state.handles_for:
        call.pushed_grads.setdefault(dest, ([], []))[1].append(out[0])
    grads: list = [None] * len(node._inputs)
    for k, g in zip(var_idx, out[1:1 + n_g]):
        grads[k] = g
    for i, (k, g) in enumerate(zip(inv_pos, out[1 + n_g:])):
        grads[k] = None if i in no_grad else g
    return [None if k in unconnected else g for k, g in enumerate(grads)]


def _unconnected_inputs(node: LoopNode, used_exits: list) -> set:
    """The positions of the inputs of `node` whose Enter reaches none of `used_exits`
    through the loop's ops (data edges, across iterations and through the cond, whose
    predicate feeds every Switch): TF differentiates only the ops between xs and ys, so
    their gradient is None, not zeros."""
    loop = node.ctx
    exits = set(loop.exits)
    used = set(used_exits)

    def inside(op) -> bool:
        ctx = op._control_flow_context
        while ctx is not None and ctx is not loop:
            ctx = ctx.outer
        return ctx is loop

    reach: Dict[Operation, bool] = {}  # op -> whether it reaches a used exit

    def reaches(op) -> bool:
        # iterative DFS: a loop body can be deep; a cycle (NextIteration) counts as no
        # reach until some op on it is found to reach
        stack, seen = [op], {op}
        order = []
        while stack:
            o = stack.pop()
            order.append(o)
            for t in o._outputs:
                for c in t._consumers:
                    if c._outputs and c._outputs[0] in exits:
                        if c._outputs[0] in used:
                            reach[op] = True
                            return True
                    elif c in reach:
                        if reach[c]:
                            reach[op] = True
                            return True
                    elif c not in seen and inside(c):
                        seen.add(c)
                        stack.append(c)
        for o in order:  # everything reachable from `op` reaches no used exit
            reach[o] = False
        return False

    return {k for k, op in enumerate(node.enter_ops) if not reaches(op)}


def _push_gradient(bw: BackwardLoop, pushed: tuple, v: Tensor, d) -> tuple:
    """Pushes `d`, the gradient of the pop `v` computed in this iteration of the backward
    loop `bw`, onto a new stack beside the stack `v` came from. Returns (the push op,
    None), or, for a pushing loop nested in another loop, (the push op, a stack of the
    gradient stacks' handles). `pushed` is (the loop that pushed `v`'s value, that value).
    `bw` runs in the pushing loop's order, so that loop's own backward loop pops the
    gradients in its (reverse) order and adds them to the pushed value's gradient.

    A nested pushing loop L runs once per iteration of its outer loop M, and `bw` once
    per iteration of the loop holding it (the backward loop of M's backward loop, which
    runs in M's order): each of its iterations makes a gradient stack and pushes the
    stack's handle, and the next backward loop of M (reverse order) pops the handles
    and gives each to the matching run of L's next backward loop."""
    pusher, t = pushed
    if _in_cond(t._op, pusher):
        raise TypeError(
            "Second-order gradients through a tf.cond inside tf.while_loop %s (value %s) "
            "are not supported." % (pusher.name, t.name))
    outer = cf.enclosing_loop(pusher.outer)
    grad = _like(d, v)
    name = t._op._name + "_grad_stack"
    loop = bw.loop
    if outer is None:
        return _new_stack_push(pusher.outer, loop, grad, name, loop.pivot,
                               loop.swap_memory)[1], None
    host = cf.enclosing_loop(loop.outer)
    if host is None or cf.enclosing_loop(outer.outer) is not None or \
            cf.enclosing_loop(host.outer) is not None:
        raise TypeError(
            "Higher-order gradients through tf.while_loops nested more than one deep (%s "
            "inside %s) are not supported." % (pusher.name, outer.name))
    # `host` is the backward loop of M's backward loop: the gradients of `bw`'s body,
    # M's nested loop included, are built in it
    hosting = host.grad_state
    handle, push = _new_stack_push(loop.outer, loop, grad, name, loop.pivot,
                                   loop.swap_memory)
    handles, handle_push = _new_stack_push(host.outer, host, handle, name + "_handles",
                                           host.pivot, False)
    hosting.handle_pushes.append(handle_push)
    if outer not in hosting.handles_for:
        hosting.handles_for.append(outer)
    return push, handles


def _received_handle(bw: BackwardLoop, handles: Tensor) -> Tensor:
    """In the backward loop holding `bw`, the handle of the gradient stack for this
    iteration, popped from the stack of handles (once per loop)."""
    from tensorweave.ops.data_flow import stack_ops
    host = cf.enclosing_loop(bw.loop.outer)
    hosting = host.grad_state  # the next backward loop of M, holding L's (see above)
    got = hosting.received_handles.get(handles)
    if got is None:
        g = host.graph
        with cf.building_in(g, host), g.control_dependencies(None), \
                g.control_dependencies([host.pivot]):
            got = stack_ops.stack_pop_v2(handles, _dt.resource, name="grad_stack_pop")
        hosting.pops.append(got._op)
        hosting.received_handles[handles] = got
    return got


def _new_stack_push(home, loop: cf.WhileContext, value: Tensor, name: str, after: Tensor,
                    swap: bool) -> tuple:
    """A new stack made in context `home` (outside `loop`) and a push of `value` onto it
    in `loop`, after `after` (what orders the pushes of successive iterations); returns
    (stack handle, push op)."""
    from tensorweave.ops.data_flow import stack_ops
    g = loop.graph
    with cf.building_in(g, home), g.control_dependencies(None):
        handle = stack_ops.stack_v2(-1, value.dtype.base_dtype, stack_name=name)
    with cf.building_in(g, loop), g.control_dependencies(None), \
            g.control_dependencies([after]):
        push = stack_ops.stack_push_v2(handle, value, swap_memory=swap)
    return handle, push._op


def _in_cond(op: Operation, loop: cf.WhileContext) -> bool:
    """Whether `op` sits in a cond branch of `loop` (or is a Switch of one)."""
    if op._type == "Switch" and op._inputs[1] is not loop.pred:
        return True
    ctx = op._control_flow_context
    while ctx is not None and ctx is not loop:
        if isinstance(ctx, cf.CondContext):
            return True
        ctx = ctx.outer
    return False
