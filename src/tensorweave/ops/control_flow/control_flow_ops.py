"""In-graph dynamic control flow (EuroSys 2018 §4.1-4.2, OSDI 2016 §3.4).

Five primitives carry all of it: Switch and Merge route one value by a predicate,
Enter / Exit move a value into / out of a loop frame, and NextIteration hands a value to
the next iteration. `tf.cond` and `tf.while_loop` compile to them exactly as in EuroSys
Figure 4: a cond switches every captured tensor on the predicate and merges each output;
a loop enters each loop variable, merges it with its NextIteration, and switches it on
the LoopCond predicate into the body or out through an Exit.

Every op created by a builder records its control-flow context (`op._control_flow_context`:
a CondContext or WhileContext, nested through `outer`), so gradients, the executor and
error messages know which construct an op belongs to. A context also rewrites the inputs
of ops created inside it: a tensor from outside a cond branch goes through a Switch, one
from outside a loop through an `is_constant` Enter (a loop invariant). Tensors from inside
a loop can only leave it through the loop's outputs; anything else is a ValueError at
build time naming both ops.

The executor's view of these ops (deadness, frames, iterations) is in runtime/frames.py.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Dict, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape, with_rank
from tensorweave.ops.control_flow import cond_side_effects as _cond_side_effects
from tensorweave.ops.control_flow.primitive_builder import make_primitive as _primitive
from tensorweave.runtime.values import DEAD, merge_index

# --- the primitives -------------------------------------------------------------------


# (these read op._inputs: builders make hundreds of these ops for one imported loop)
def _same_shape(op):
    return op._inputs[0]._shape


def _switch_shape(op):
    with_rank(op._inputs[1]._shape, 0)
    s = op._inputs[0]._shape
    return [s, s]


def _merge_shape(op):
    shapes = [t._shape for t in op._inputs]
    out = shapes[0]
    for s in shapes[1:]:
        if s is out:  # a loop's Merge, made of its Enter twice
            continue
        if out.rank is None or s.rank is None or out.rank != s.rank:
            out = unknown_shape()
            break
        out = TensorShape([a if a == b else None for a, b in zip(out.as_list(),
                                                                 s.as_list())])
    return [out, TensorShape([])]


register_op("Switch", inputs=["data: T", "pred: bool"],
            outputs=["output_false: T", "output_true: T"], shape=_switch_shape)
register_op("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
            shape=_merge_shape)
register_op("Enter", inputs=["data: T"], outputs=["output: T"],
            attrs={"frame_name": REQUIRED, "is_constant": False, "parallel_iterations": 10},
            shape=_same_shape)
register_op("Exit", inputs=["data: T"], outputs=["output: T"], shape=_same_shape)
register_op("NextIteration", inputs=["data: T"], outputs=["output: T"], shape=_same_shape)
register_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
            shape=lambda op: with_rank(op.inputs[0].shape, 0))
register_op("ControlTrigger", stateful=True)


@kernel("Switch")
def _switch_kernel(ctx, data, pred):
    if getattr(pred, "ndim", 0) != 0:  # a fed predicate escapes the build-time check
        raise errors.InvalidArgumentError(
            None, ctx.op, "The second input must be a scalar, but it has shape %s"
            % list(pred.shape))
    return (DEAD, data) if pred else (data, DEAD)


@kernel("Merge")
def _merge_kernel(ctx, *inputs):
    # the executors call this only once a live input is there (or all are dead)
    for i, v in enumerate(inputs):
        if v is not DEAD:
            return v, merge_index(i)
    return DEAD, DEAD


def _forward(ctx, x):
    return x


for _t in ("Enter", "Exit", "NextIteration", "LoopCond"):
    kernel(_t)(_forward)


@kernel("ControlTrigger")
def _control_trigger_kernel(ctx):
    return None


not_differentiable("LoopCond")
not_differentiable("ControlTrigger")


def switch(data, pred, name: Optional[str] = None):
    """(output_false, output_true): `data` on the side `pred` selects; the other side
    is dead (EuroSys §4.1)."""
    op = _primitive("Switch", [data, pred], name or "Switch")
    return op._outputs[0], op._outputs[1]


def merge(inputs, name: Optional[str] = None):
    """(output, value_index): forwards whichever input is live."""
    op = _primitive("Merge", list(inputs), name or "Merge")
    return op._outputs[0], op._outputs[1]


# --- contexts ---------------------------------------------------------------------------


def _context_chain_has(ctx, target) -> bool:
    while ctx is not None:
        if ctx is target:
            return True
        ctx = ctx.outer
    return False


def enclosing_loop(ctx):
    """The innermost WhileContext of the context chain starting at `ctx` (or None)."""
    while ctx is not None and not isinstance(ctx, WhileContext):
        ctx = ctx.outer
    return ctx


def while_context_of(op: Operation):
    """The innermost WhileContext the value of `op` lives in (None: the root frame).
    An Exit's output lives outside its loop."""
    ctx = op._control_flow_context
    if op._type == "Exit" and isinstance(ctx, WhileContext):
        ctx = ctx.outer
    return enclosing_loop(ctx)


def _location(op: Operation) -> str:
    loc = op.traceback_location
    return "%s:%s" % (loc[0], loc[1]) if loc else "<unknown>"


def check_frame_of_input(t: Tensor, new_op_name: str, ctx, location) -> None:
    """Raises ValueError when `t` comes from inside a loop that the new op is not in."""
    made_in = t._op._control_flow_context
    if made_in is None or made_in is ctx:  # the root frame, or the new op's own context
        return  # (most inputs: whatever loop `t` is in is then one the new op is in)
    src_loop = while_context_of(t._op)
    if src_loop is None:
        return
    cur = ctx
    while cur is not None:
        if cur is src_loop:
            return
        cur = cur.outer
    raise ValueError(
        "Cannot use '%s' (created at %s) as an input of '%s' (created at %s): '%s' is "
        "inside the while loop '%s' and '%s' is not. Values computed in a loop can only "
        "leave it as outputs of tf.while_loop." % (
            t._op._name, _location(t._op), new_op_name,
            "%s:%s" % location if location else "<unknown>", t._op._name, src_loop.name,
            new_op_name))


class ControlFlowContext:
    """Base of CondContext and WhileContext: nesting, entering, input rewriting."""

    def __init__(self, graph):
        self.graph = graph
        self.outer = graph._get_control_flow_context()
        self._values: Dict[Tensor, Tensor] = {}  # external tensor -> its value in here

    def __enter__(self):
        self._saved = self.graph._get_control_flow_context()
        self.graph._set_control_flow_context(self)
        return self

    def __exit__(self, *exc):
        self.graph._set_control_flow_context(self._saved)
        return False

    def contains(self, op: Operation) -> bool:
        """True when `op` was created inside this context (or one nested in it)."""
        return _context_chain_has(op._control_flow_context, self)

    def resolve(self, t: Tensor) -> Tensor:
        """The tensor to use inside this context for `t`."""
        if _context_chain_has(t._op._control_flow_context, self):  # (self.contains)
            return t
        v = self._values.get(t)
        if v is None:
            outer_t = self.outer.resolve(t) if self.outer is not None else t
            v = self._import(outer_t)
            self._values[t] = v
            self._values[v] = v
        return v

    def resolve_inputs(self, inputs: List[Tensor]) -> List[Tensor]:
        # (an input made in this very context stays: the common case, checked first)
        return [t if t._op._control_flow_context is self else self.resolve(t)
                for t in inputs]

    def _import(self, t: Tensor) -> Tensor:
        raise NotImplementedError("%s must say how a value enters it" % type(self).__name__)

    def add_op(self, op: Operation) -> None:
        """Called for every op created in this context: an op with no inputs gets a
        control input from the pivot, so it runs only when the context is active."""
        if not op._inputs and self.pivot is not None and \
                self.pivot._op not in op._control_inputs:
            op._control_inputs.append(self.pivot._op)
            self.pivot._op._control_outputs.append(op)


class CondContext(ControlFlowContext):
    """One branch of a cond: `pred` selects it, `pivot` is live exactly when it is taken."""

    def __init__(self, graph, pred: Tensor, pivot: Tensor, branch: int, name: str):
        super().__init__(graph)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.name = name

    def _import(self, t: Tensor) -> Tensor:
        with _outer_context(self), _without_control_dependencies(self.graph):
            return switch(t, self.pred, name="Switch")[self.branch]


class WhileContext(ControlFlowContext):
    """One while loop (one frame at run time). `pivot` is the body's first loop value;
    `pred` the LoopCond output. Built by `while_loop`; gradients add a forward iteration
    counter and stack pushes to it afterwards (control_flow_grad.py).

    What gradients record about a loop describes the graph and outlives any one
    tf.gradients call: `backward_loops` lists the backward loops built for this loop
    (each with the iteration counter gradients added to this loop for it), and a
    backward loop's `grad_state` is its BackwardLoop record (None for every other loop).
    """

    def __init__(self, graph, name: str, parallel_iterations: int, back_prop: bool,
                 swap_memory: bool):
        super().__init__(graph)
        self.name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.pivot: Optional[Tensor] = None
        self.pred: Optional[Tensor] = None
        self.enters: List[Tensor] = []       # loop-variable Enter outputs
        self.merges: List[Tensor] = []
        self.switches: List[tuple] = []
        self.body_inputs: List[Tensor] = []  # Identity(switch true): what body() received
        self.body_outputs: List[Tensor] = []  # NextIteration inputs
        self.exits: List[Tensor] = []
        self.invariants: Dict[Tensor, Tensor] = {}  # external tensor -> is_constant Enter
        self.enter_ops: List[Operation] = []  # every Enter into this frame, in order
        self.backward_loops: list = []  # BackwardLoop records of this loop's gradients
        self.grad_state = None  # a backward loop's own BackwardLoop record
        # graph ids (lo, hi] of the ops `cond` built: error texts say while/cond for them
        self.cond_ids: Optional[tuple] = None
        # outer ops without outputs that ops here run after -> a constant built after each
        self._control_tokens: Dict[Operation, Tensor] = {}

    def resolve(self, t: Tensor) -> Tensor:
        state = self.grad_state
        if state is not None and not self.contains(t._op) and \
                while_context_of(t._op) is state.forward:
            # a forward value read in its backward loop: the value of the matching
            # forward iteration, popped from the stack the forward loop pushes it on
            v = self._values.get(t)
            if v is None:
                if t._op._type == "Enter" and t._op._attrs.get("is_constant"):
                    v = self.resolve(t._op._inputs[0])  # a loop invariant: re-enter it
                else:
                    v = state.pop_forward_value(t)
                self._values[t] = v
            return v
        return super().resolve(t)

    def _import(self, t: Tensor) -> Tensor:
        e = enter(t, self, is_constant=True)
        self.invariants[t] = e
        return e

    def add_op(self, op: Operation) -> None:
        if op._type in ("Enter",):
            return
        if op._control_inputs:
            self._enter_outer_control_inputs(op)
        super().add_op(op)
        # an op whose inputs are all loop invariants would be enabled by them in every
        # iteration the frame starts, the last one (whose predicate is false) included:
        # as in TF, a control input from the pivot runs it only where the body (or the
        # predicate) runs. (A dequeue in a body would otherwise take one element too
        # many on an executor that runs iterations as dataflow.)
        inputs = op._inputs
        if inputs and not op._control_inputs and self.pivot is not None and \
                inputs[0]._op._type in ("Enter", "RefEnter") and all(
                    t._op._type in ("Enter", "RefEnter") and t._op._attrs.get("is_constant")
                    for t in inputs):
            op._control_inputs.append(self.pivot._op)
            self.pivot._op._control_outputs.append(op)


    def _enter_outer_control_inputs(self, op: Operation) -> None:
        """An op of this loop built under an outer `control_dependencies` cannot take
        the outer ops as control inputs (an input from another frame): as in TF, each
        becomes an Identity in this loop of the outer op's first output (a loop
        invariant), which the op waits on in every iteration. An outer op without
        outputs, which TF drops, is kept: through a constant built after it."""
        outer_loops, ctx = [None], enclosing_loop(self.outer)
        while ctx is not None:
            outer_loops.append(ctx)
            ctx = enclosing_loop(ctx.outer)
        external = [c for c in op._control_inputs if while_context_of(c) in outer_loops]
        if not external:
            return
        internal = [c for c in op._control_inputs if c not in external]
        op._remove_all_control_inputs()
        op._add_control_inputs(internal)
        graph = self.graph
        for c in external:
            if c._outputs:
                value = c._outputs[0]
            else:
                value = self._control_tokens.get(c)
                if value is None:
                    with building_in(graph, c._control_flow_context), \
                            graph.control_dependencies([c]):
                        value = convert_to_tensor(0, name="control_dependency")
                    self._control_tokens[c] = value
            with graph.control_dependencies(None), building_in(graph, self):
                op._add_control_input(_identity(value, None)._op)


class building_in:
    """Ops created inside `with building_in(graph, ctx):` belong to the control-flow
    context `ctx` (None: no context); the current context comes back on exit. Nestable,
    unlike entering a context with `with ctx:`, which keeps what it replaced on `ctx`."""

    def __init__(self, graph, ctx: Optional[ControlFlowContext]):
        self.graph, self.ctx = graph, ctx

    def __enter__(self):
        self.saved = self.graph._get_control_flow_context()
        self.graph._set_control_flow_context(self.ctx)

    def __exit__(self, *exc):
        self.graph._set_control_flow_context(self.saved)
        return False


def _outer_context(ctx: ControlFlowContext) -> building_in:
    """Temporarily leaves `ctx` for its outer context (ops created in between belong
    to the outer one)."""
    return building_in(ctx.graph, ctx.outer)


_NO_CHANGE = contextlib.nullcontext()


def _without_control_dependencies(graph):
    """`graph.control_dependencies(None)`, or nothing to enter when none are active
    (the common case: builders here enter a value per loop variable or captured
    tensor)."""
    return graph.control_dependencies(None) if graph._control_stack else _NO_CHANGE


def enter(t: Tensor, ctx: WhileContext, is_constant: bool, name: str = "Enter") -> Tensor:
    """`t` (from ctx's outer context) entered into the frame of `ctx`."""
    # control dependencies of the op being built do not apply to its captured inputs
    with _outer_context(ctx), _without_control_dependencies(ctx.graph):
        op = _primitive("Enter", [t], name, {
            "frame_name": ctx.name, "is_constant": is_constant,
            "parallel_iterations": ctx.parallel_iterations})
    op._control_flow_context = ctx
    ctx.enter_ops.append(op)
    return op._outputs[0]


def _outer_control_inputs_to_enters(ctx: WhileContext, flat: List[Tensor]) -> None:
    """As TF's _FixControlInputsAndContext: the loop variables' Enters take the active
    outer control dependencies (those built in `ctx`'s outer context, or in a cond
    between it and the enclosing loop) and count as built under them, so the ops that
    consume the loop variables need none of their own."""
    graph = ctx.graph
    boundary = enclosing_loop(ctx.outer)
    for t, e in zip(flat, ctx.enters):
        kept = []
        for c in graph._current_control_inputs([t]):
            where = ctx.outer
            while where is not c._control_flow_context and where is not None and \
                    where is not boundary:
                where = where.outer
            if where is c._control_flow_context:
                kept.append(c)
        e._op._add_control_inputs(kept)
        for block in graph._control_stack:
            block.seen.add(e._op)


# --- cond -------------------------------------------------------------------------------


def _to_tensors(structure, what: str, pivot: Optional[Tensor] = None):
    """Flat list of Tensors and a rebuild function. A TensorArray becomes its flow; a
    SparseTensor or IndexedSlices its component tensors (TF's expand_composites), so
    each travels through Switch/Merge/Enter/Exit as tensors and comes back whole.
    With `pivot` (a cond branch's), an Operation stands as the pivot run after it, as
    TF1's cond returns it (a bool tensor that is the branch's predicate).

    `rebuild(values, shapes=None)` packs `values` like `structure`; a rebuilt
    SparseTensor keeps the static dense shape of its template (TF's SparseTensorSpec),
    or the one `shapes` gives for it (a list over the SparseTensors, in order)."""
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    flat = nest.flatten(structure, expand_composites=True)
    tas = {}
    out = []
    for i, v in enumerate(flat):
        if isinstance(v, TensorArray):
            tas[i] = v
            out.append(v.flow)
        elif isinstance(v, Operation):
            if pivot is None:
                raise TypeError("%s must return Tensors, not the Operation %s; wrap it in "
                                "tf.group or return a tensor with control dependencies on "
                                "it." % (what, v.name))
            with v.graph.control_dependencies([v]):
                out.append(_identity(pivot, None))
        else:
            out.append(convert_to_tensor(v))

    plain = nest.is_flat(structure, expand_composites=True)

    def rebuild(values, shapes: Optional[list] = None):
        from tensorweave.framework.sparse_tensor import SparseTensor
        vals = [tas[i]._with_flow(v) if i in tas else v for i, v in enumerate(values)]
        if plain:  # a list or tuple of leaves: no composite to rebuild
            return nest.pack_sequence_as(structure, vals)
        # (wrapped: a lone composite is not a sequence to nest, yet has several leaves)
        packed = nest.pack_sequence_as([structure], vals, expand_composites=True)[0]
        sparse = [(new, old) for new, old in zip(nest.flatten(packed), nest.flatten(structure))
                  if isinstance(new, SparseTensor)]
        for j, (new, old) in enumerate(sparse):
            new._dense_shape_default = shapes[j] if shapes is not None else old.shape
        return packed
    return out, rebuild


def _composite_kinds(structure) -> list:
    """Per leaf (composites unexpanded): its composite type and component count, or
    None for a plain value."""
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.sparse_tensor import SparseTensor
    return [(type(v), len(nest.flatten(v, expand_composites=True)))
            if isinstance(v, (SparseTensor, IndexedSlices)) else None
            for v in nest.flatten(structure)]


def _assert_same_composites(a, b) -> None:
    """Raises ValueError unless `a` and `b` (of the same nesting) hold composites of the
    same kinds at the same places (an IndexedSlices with a dense shape is not one
    without), as TF's nest with expand_composites does."""
    if _composite_kinds(a) != _composite_kinds(b):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         "First structure: %s\n\nSecond structure: %s" % (a, b))


@tf_export("cond")
def cond(pred, true_fn: Callable = None, false_fn: Callable = None, strict: bool = False,
         name: Optional[str] = None, fn1: Callable = None, fn2: Callable = None):
    """Returns `true_fn()` if `pred` is true else `false_fn()` (TF1 `tf.cond`).

    Both branches are built into the graph; at run time only the taken one executes
    (ops of the other branch, side effects included, receive dead values and do not
    run). Tensors used inside a branch from outside are switched on `pred`.

    Args:
      pred: a scalar boolean tensor.
      true_fn: callable returning the result when `pred` is true.
      false_fn: callable returning the result when `pred` is false.
      strict: if False, a single-element list/tuple result is unpacked (repeatedly:
        [[x]] gives x).
      name: name scope for the ops.
      fn1, fn2: deprecated aliases of true_fn / false_fn.

    Returns:
      The nested structure the branches return, of merged tensors.

    Raises:
      TypeError: a branch is missing or not callable, `pred` is a Python bool, or the
        branch structures differ in type.
      ValueError: a branch returns None or nothing (an empty structure), or the
        branches return different structures or dtypes.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is None:
            raise TypeError("cond(): '%s' argument required" % arg)
        if not callable(fn):
            raise TypeError("'%s' must be callable." % arg)
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    return cond_of_callables(pred, true_fn, false_fn, strict, name)


def cond_of_callables(pred, true_fn: Callable, false_fn: Callable, strict: bool,
                      name: Optional[str],
                      mismatch_error: Optional[Callable[[], Exception]] = None):
    """`cond` on checked callables. `mismatch_error`, when given, makes the exception
    raised for branches whose results differ in structure or dtype (`switch_case`
    words it in terms of its branches)."""
    g = _graph.get_default_graph()
    with _graph.name_scope(name, "cond", [pred]) as scope:
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype is not _dt.bool:
            raise TypeError("pred must be a bool tensor, got %s" % pred.dtype.name)
        with_rank(pred.shape, 0)
        p_false, p_true = switch(pred, pred)
        pivot_t = _identity(p_true, "switch_t")
        pivot_f = _identity(p_false, "switch_f")
        pred_id = _identity(pred, "pred_id")
        results = []
        built = []  # (context, ops created for the branch, outputs): the side-effect check
        for branch, pivot, fn in ((1, pivot_t, true_fn), (0, pivot_f, false_fn)):
            ctx = CondContext(g, pred_id, pivot, branch, scope + ("cond_true" if branch
                                                                   else "cond_false"))
            first_op = len(g._ops)
            with ctx:
                r = fn()
                if r is None:
                    raise ValueError("'%s' must have a return value."
                                     % ("true_fn" if branch else "false_fn"))
                flat, rebuild = _to_tensors(r, "true_fn" if branch else "false_fn", pivot)
                # a value from outside comes through the branch's Switch, so every
                # output is dead when the branch is not taken
                flat = [ctx.resolve(t) for t in flat]
            results.append((r, flat, rebuild))
            built.append((ctx, g._ops[first_op:], flat))
        _cond_side_effects.check(scope.rstrip("/"), pred_id, built)
        (r_t, flat_t, rebuild), (r_f, flat_f, _) = results
        try:
            _check_branch_results(r_t, r_f, flat_t, flat_f)
        except (ValueError, TypeError):
            if mismatch_error is None:
                raise
            raise mismatch_error() from None
        merged = []
        for t, f in zip(flat_t, flat_f):
            m, _ = merge([f, t], name="Merge")
            m._op._cond_pred = pred_id  # what the Merge's gradient switches on
            merged.append(m)
        out = rebuild(merged)
        # TF unpacks singletons all the way down, a namedtuple of one field too
        while not strict and isinstance(out, (list, tuple)) and len(out) == 1:
            out = out[0]
        return out


def _check_branch_results(r_t, r_f, flat_t: List[Tensor], flat_f: List[Tensor]) -> None:
    """Raises TF's cond errors unless the branch results `r_t`, `r_f` (flattened to
    `flat_t`, `flat_f`) have one structure, at least one tensor, and equal dtypes."""
    try:
        nest.assert_same_structure(r_t, r_f)
    except (ValueError, TypeError) as e:
        raise type(e)("true_fn and false_fn must return the same structure: %s" % e)
    try:
        _assert_same_composites(r_t, r_f)
    except ValueError as e:
        raise ValueError("Incompatible return values of 'true_fn' and 'false_fn': %s"
                         % e) from None
    if not flat_t:
        raise ValueError("'true_fn' and 'false_fn' must return at least one result.")
    for t, f in zip(flat_t, flat_f):
        if t.dtype.base_dtype is not f.dtype.base_dtype:
            raise ValueError("Outputs of 'true_fn' and 'false_fn' must have the same "
                             "type(s). Received %s from 'true_fn' and %s from "
                             "'false_fn'." % (t.dtype.name, f.dtype.name))


def _identity(t: Tensor, name) -> Tensor:
    return _primitive("Identity", [t], name or "Identity")._outputs[0]


# --- while_loop ----------------------------------------------------------------------------


def _shape_less_specific_ok(body_shape: TensorShape, invariant: TensorShape) -> bool:
    """True when each iteration's shape satisfies the invariant."""
    if invariant.rank is None:
        return True
    if body_shape.rank is None or body_shape.rank != invariant.rank:
        return False
    return all(i is None or (b is not None and b == i)
               for b, i in zip(body_shape.as_list(), invariant.as_list()))


@tf_export("while_loop")
def while_loop(cond: Callable, body: Callable, loop_vars, shape_invariants=None,
               parallel_iterations: int = 10, back_prop: bool = True,
               swap_memory: bool = False, name: Optional[str] = None,
               maximum_iterations=None, return_same_structure: bool = False,
               _grad_state=None):
    """Repeats `body` while `cond` is true (TF1 `tf.while_loop`, EuroSys Figure 4).

    Args:
      cond: callable taking the loop variables, returning a boolean scalar tensor.
      body: callable taking the loop variables, returning new values of the same
        structure (Tensors or TensorArrays).
      loop_vars: a (nested) list/tuple/dict of Tensors, TensorArrays or Python numbers.
      shape_invariants: shapes the variables keep across iterations (default: their
        initial shapes); use unknown dimensions for values that change shape.
      parallel_iterations: the number of iterations allowed to run at once.
      back_prop: whether gradients may flow through the loop.
      swap_memory: move values kept for the gradient to host memory.
      name: name scope (also the frame name).
      maximum_iterations: optional bound on the number of iterations.
      return_same_structure: if False, a single loop variable is returned unwrapped.
        As in TF1, `cond` and `body` receive a list, tuple or namedtuple of loop variables
        as separate arguments, and a body returning one tensor for a list/tuple of loop
        variables returns a one-element list.
      _grad_state: internal: the BackwardLoop record when this is the backward loop of
        another loop (its forward values are popped from stacks, control_flow_grad.py).

    Returns:
      The loop variables after the last iteration, in the structure the body returned
      (as TF1: a tuple for a body returning a tuple, whatever `loop_vars` was).

    Raises:
      TypeError: `cond` or `body` is not callable.
      ValueError: empty loop_vars, parallel_iterations < 1, a structure mismatch, or a
        variable whose shape changes beyond its shape invariant.
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if not nest.flatten(loop_vars) and not isinstance(loop_vars, (list, tuple, dict)):
        raise ValueError("'loop_vars' must be provided.")
    g = _graph.get_default_graph()
    with _graph.name_scope(name, "while", nest.flatten(loop_vars)) as scope:
        user_vars = loop_vars
        if maximum_iterations is not None:
            counter = convert_to_tensor(0, dtype=_dt.int32, name="iteration_counter")
            max_it = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if max_it.shape.rank not in (None, 0):
                raise ValueError("'maximum_iterations' must be a scalar. Received shape: %s"
                                 % (tuple(max_it.shape.as_list()),))
            if max_it.dtype.base_dtype is not _dt.int32:
                from tensorweave.ops.math import math_ops
                max_it = math_ops.cast(max_it, _dt.int32)
            # as TF1: one loop variable (not return_same_structure) is carried unwrapped,
            # so the body's own result comes back as it is
            pack = isinstance(user_vars, (list, tuple)) and len(user_vars) == 1 and \
                not return_same_structure
            loop_vars = (counter, user_vars[0] if pack else user_vars)
            user_cond, user_body = cond, body
            call = (lambda fn, lv: fn(lv)) if pack else _call

            def cond(i, lv):  # noqa: F811 - the bounded cond
                from tensorweave.ops.math import math_binary
                c = call(user_cond, lv)
                return math_binary.logical_and(i < max_it, c)

            def body(i, lv):  # noqa: F811
                r = call(user_body, lv)
                if isinstance(lv, (list, tuple)) and not nest.is_sequence(r):
                    r = [r]
                return i + 1, r
            if shape_invariants is not None:
                if pack and isinstance(shape_invariants, (list, tuple)) and \
                        len(shape_invariants) == 1:
                    shape_invariants = shape_invariants[0]  # TF1 wants it unwrapped too
                shape_invariants = (TensorShape([]), shape_invariants)
        flat, rebuild = _to_tensors(loop_vars, "loop_vars")
        if not flat:
            raise ValueError("'loop_vars' must be provided.")
        invariants, sparse_shapes = _flat_invariants(loop_vars, shape_invariants, flat)
        ctx = WhileContext(g, scope[:-1] if scope.endswith("/") else scope,
                           parallel_iterations, back_prop, swap_memory)
        if _grad_state is not None:
            ctx.grad_state, _grad_state.loop = _grad_state, ctx
        g._has_while = True
        ctx.enters = [enter(t, ctx, is_constant=False) for t in flat]
        if g._control_stack:
            _outer_control_inputs_to_enters(ctx, flat)
        with ctx:
            ctx.merges = []
            for e, inv in zip(ctx.enters, invariants):
                m, _ = merge([e, e], name="Merge")
                _check_initial_shape(e, inv)
                m._shape = inv
                ctx.merges.append(m)
            ctx.pivot = ctx.merges[0]  # ops without inputs in `cond` hang off it
            first_id = g._id_counter
            c = convert_to_tensor(_call(cond, rebuild(ctx.merges, sparse_shapes)))
            if c.dtype.base_dtype is not _dt.bool:
                raise TypeError("cond must return a boolean tensor, got %s" % c.dtype.name)
            ctx.pred = _primitive("LoopCond", [c], "LoopCond")._outputs[0]
            ctx.cond_ids = (first_id, g._id_counter)
            ctx.switches = [switch(m, ctx.pred, name="Switch") for m in ctx.merges]
            ctx.body_inputs = [_identity(s[1], "Identity") for s in ctx.switches]
            ctx.pivot = ctx.body_inputs[0]
            result = _call(body, rebuild(ctx.body_inputs, sparse_shapes))
            if isinstance(loop_vars, (list, tuple)) and not nest.is_sequence(result):
                result = [result]  # as TF1: a lone result is a one-element list
            try:
                nest.assert_same_structure(_structure_of(loop_vars), _structure_of(result),
                                           check_types=False)
            except (ValueError, TypeError) as e:
                raise ValueError("The body of tf.while_loop must return the same structure "
                                 "as loop_vars: %s" % e) from None
            _assert_same_composites(loop_vars, result)  # TF's message, unprefixed
            # as TF1, the results come back in the structure the body returned
            out_flat, rebuild_result = _to_tensors(result, "body")
            ctx.body_outputs = [ctx.resolve(t) for t in out_flat]
            for m, b, e in zip(ctx.merges, ctx.body_outputs, ctx.enters):
                if b.dtype.base_dtype is not m.dtype.base_dtype:
                    raise ValueError("Loop variable %s enters the loop with type %s, but "
                                     "has type %s after one iteration." % (
                                         e._op.inputs[0].name, m.dtype.name, b.dtype.name))
                if not _shape_less_specific_ok(b.shape, m.shape):
                    raise ValueError(
                        "Input tensor '%s' enters the loop with shape %s, but has shape %s "
                        "after one iteration. To allow the shape to vary across iterations, "
                        "use the `shape_invariants` argument of tf.while_loop to specify a "
                        "less-specific shape." % (e._op.inputs[0].name,
                                                  e._op.inputs[0].shape, b.shape))
                nxt = _primitive("NextIteration", [b], "NextIteration")._outputs[0]
                m._op._update_input(1, nxt)
            # an Exit belongs to the loop's context; its output lives outside the loop
            ctx.exits = [_primitive("Exit", [s[0]], "Exit")._outputs[0]
                         for s in ctx.switches]
        g._while_contexts.append(ctx)
        out = rebuild_result(ctx.exits)
        if maximum_iterations is not None:
            return out[1]  # the body's own result, as TF1 returns it
        if not return_same_structure and isinstance(out, (list, tuple)) and len(out) == 1 \
                and len(flat) == 1:
            return out[0]
        return out


def _call(fn, args):
    # TF1 calls cond and body with the loop variables unpacked (namedtuples included)
    if isinstance(args, (list, tuple)):
        return fn(*args)
    return fn(args)


def _structure_of(x):
    return nest.map_structure(lambda v: 0, x) if nest.is_sequence(x) else 0


def _flat_invariants(loop_vars, shape_invariants, flat) -> tuple:
    """The shape each tensor of `flat` (the loop variables' tensors, `_to_tensors`)
    keeps across iterations, and the static dense shape of each SparseTensor loop
    variable inside the loop."""
    lv = nest.flatten(loop_vars)  # composites unexpanded
    if shape_invariants is None:
        inv = [None] * len(lv)
    else:
        inv = nest.flatten(shape_invariants)
        if len(inv) != len(lv):
            raise ValueError("shape_invariants must have the same structure as loop_vars: "
                             "%d shapes for %d loop variables" % (len(inv), len(lv)))
    shapes: List[TensorShape] = []
    sparse_shapes: List[TensorShape] = []
    for v, s in zip(lv, inv):
        got, dense = _component_invariants(v, s)
        shapes.extend(got)
        if dense is not None:
            sparse_shapes.append(dense)
    if shape_invariants is None:  # a plain tensor keeps its own shape
        shapes = [sh if sh is not None else t.shape for sh, t in zip(shapes, flat)]
    return shapes, sparse_shapes


def _component_invariants(v, s) -> tuple:
    """(the shapes the tensors of loop variable `v` keep under the shape invariant `s`,
    None: `v`'s own; a SparseTensor's static dense shape, else None). As TF: a
    SparseTensor's invariant is the shape of its `dense_shape` (default: its rank), and
    its indices and values may change their count every iteration; an IndexedSlices'
    is that of its values (default: the components' own shapes)."""
    if type(v) is Tensor:  # the common case, first
        return [TensorShape(s) if s is not None else None], None
    from tensorweave.framework.indexed_slices import IndexedSlices
    from tensorweave.framework.sparse_tensor import SparseTensor
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    if isinstance(v, TensorArray):
        # the loop carries its flow, a scalar: an invariant is checked against that (TF)
        return [TensorShape(s) if s is not None else TensorShape([])], None
    if isinstance(v, SparseTensor):
        if s is None:
            dense = v.shape
            rank = dense.rank
        else:
            s = TensorShape(s)
            if s.rank is not None and s.rank != 1:
                raise ValueError("Expected a shape with 1 dimension. Obtained: %s which "
                                 "has %d dimensions." % (s, s.rank))
            rank = s.as_list()[0] if s.rank is not None else None
            dense = unknown_shape(rank) if rank is not None else unknown_shape()
        return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])], dense
    if isinstance(v, IndexedSlices):
        parts = nest.flatten(v, expand_composites=True)
        if s is None:
            return [p.shape for p in parts], None
        s = TensorShape(s)
        rows = TensorShape(s.as_list()[:1]) if s.rank is not None else unknown_shape()
        return [s, rows, TensorShape([s.rank])][:len(parts)], None
    return [TensorShape(s) if s is not None else None], None


def _check_initial_shape(e: Tensor, inv: TensorShape) -> None:
    if not _shape_less_specific_ok(e.shape, inv) and e.shape.rank is not None:
        raise ValueError("The shape invariant specified for %s is not compatible with the "
                         "initial shape of the loop variable. It enters the loop with shape "
                         "%s, but the specified shape invariant is %s." % (
                             e._op.inputs[0].name, e.shape, inv))
