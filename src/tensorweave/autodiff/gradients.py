"""Reverse-mode differentiation of a graph: `tf.gradients` and `tf.hessians`.

The algorithm is the one of OSDI 2016 §4.1: find the ops on a path from `xs` to `ys`,
walk them backwards from `ys` in an order where every op runs after all its consumers
have contributed, and call each op's registered gradient function to add gradient ops to
the graph. Partial gradients of one tensor are summed (AddN for dense tensors,
concatenation for IndexedSlices).

Cost: the walk first collects the ancestors of `ys` and then only looks forward from
`xs` through that set, so building gradients costs time in the size of the subgraph
between `ys` and `xs`, not of the whole graph.

Control flow (EuroSys 2018 §5.1-5.2, ops/control_flow/control_flow_grad.py): a while
loop takes part in the walk as one node, whose gradient is a backward loop built by
walking the loop's body in a nested walk. The bookkeeping those walks share is one
`GradientCall` (gradient_call.py) made here for the user's call and passed explicitly:
to the nested walks and to the gradient functions registered with `needs_call=True`.
"""
from __future__ import annotations

import contextlib
import enum
from typing import Dict, List, Sequence

from tensorweave.autodiff.gradient_call import GradientCall
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Operation, Tensor, _graph_of, get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor


class UnconnectedGradients(enum.Enum):
    """What `gradients` returns for an x that does not reach any y."""
    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How partial gradients are summed (TF1 names; all build one AddN here, which
    frees its inputs as soon as it has run)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_NO_SCOPE = contextlib.nullcontext()


def _xla_scope(op, grad_scope: str):
    """The XLA attrs the gradient of `op` is built with (tf.xla.experimental.jit_scope's
    ops pass theirs on); nothing for an op outside a jit scope."""
    if not isinstance(op, Operation) or "_XlaCompile" not in op._attrs:
        return _NO_SCOPE
    from tensorweave.framework.jit import gradient_attr_scope
    return gradient_attr_scope(op, grad_scope)


def _as_tensor_or_slices(x):
    if isinstance(x, (Tensor, IndexedSlices)):
        return x
    return convert_to_tensor(x)


def _differentiable(t: Tensor) -> bool:
    d = t._dtype
    return d.is_floating or d.is_complex or d is _dt.resource or d is _dt.variant


def _node_of(op, call: GradientCall):
    """`op`, or the whole while loop it belongs to (ops/control_flow/control_flow_grad.py)."""
    if op._control_flow_context is None:
        return op
    from tensorweave.ops.control_flow.control_flow_grad import node_of
    return node_of(op, call)


_BACK_EDGES = ("NextIteration", "RefNextIteration")


def _between_ops(ys: Sequence[Tensor], xs: Sequence[Tensor], stop_ops: set,
                 call: GradientCall) -> set:
    """Ops on some path from an x to a y (excluding paths through stop ops). A while
    loop takes part as one node (its LoopNode). Inside a loop body being differentiated
    (the walk of a backward loop's body) no path crosses a NextIteration: values reach the next
    iteration through the loop's own gradient machinery, and a path around the back
    edge (a loop variable computed from a value the body also uses, as an argmax fed
    back as the next token) would make the walk wait on itself."""
    ancestors = set()
    stack = [_node_of(y._op, call) for y in ys]
    in_body = call.backward_loop is not None
    while stack:
        op = stack.pop()
        if op in ancestors:
            continue
        ancestors.add(op)
        if op in stop_ops:
            continue
        for t in op._inputs:
            src = _node_of(t._op, call)
            if src not in ancestors and not (in_body and
                                             getattr(src, "_type", None) in _BACK_EDGES):
                stack.append(src)
    between = set()
    stack = [_node_of(x._op, call) for x in xs if _node_of(x._op, call) in ancestors]
    x_ops = set(stack)
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        if op in stop_ops and op not in x_ops:
            continue
        for out in op._outputs:
            for c in out._consumers:
                c = _node_of(c, call)
                if c in ancestors and c not in between:
                    stack.append(c)
    return between


def _aggregate(grads: list, name_hint: str):
    """Sums the partial gradients of one tensor."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    if all(isinstance(g, IndexedSlices) for g in grads):
        from tensorweave.framework.indexed_slices import as_indexed_slices_list
        grads = as_indexed_slices_list(grads)  # int32 and int64 indices: all int64
        dense_shape = next((g.dense_shape for g in grads if g.dense_shape is not None), None)
        return IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                             array_ops.concat([g.indices for g in grads], 0), dense_shape)
    dense = [convert_to_tensor(g) for g in grads]
    return math_ops.add_n(dense, name=name_hint)


def zeros_like_gradient(t: Tensor, optimize: bool = True):
    """Zeros of the type of a gradient of `t`: like `t`, or for a resource handle of a
    variable, like the variable's value (the gradient of a handle is that of its reads,
    TF's ZerosLikeOutsideLoop). None for a resource handle not known to name a variable.
    With `optimize` False the zeros are computed at run time, dead exactly when `t` is
    (inside control flow)."""
    from tensorweave.ops.array import array_ops
    if t._dtype.base_dtype is not _dt.resource:
        return array_ops.zeros_like(t, optimize=optimize)
    from tensorweave.ops.state import resource_variable_ops as rv
    src = rv.handle_source(t)
    if src._op._type != "VarHandleOp":
        return None
    dtype = src._op._get_attr("dtype")
    from tensorweave.framework import graph as _graph_mod
    with _graph_mod.name_scope(None, "zeros_like", [t]) as scope:
        if optimize:
            return array_ops.zeros(rv.variable_shape(t), dtype=dtype, name=scope)
        # the shape may be a constant: a control edge from the handle gives the zeros
        # its deadness (an Identity: a control edge from a Switch is live on both sides)
        from tensorweave.ops.control_flow import structure
        with t.graph.control_dependencies([structure.identity(t)]):
            return array_ops.zeros(rv.variable_shape(t), dtype=dtype, name=scope)


def _zeros_like_output(t: Tensor):
    # inside control flow the zeros must share the deadness of `t` (not a constant)
    return zeros_like_gradient(t, optimize=t._op._control_flow_context is None)


def _grad_fn_for(op: Operation):
    """(the gradient function of `op`, whether it takes the GradientCall)."""
    if not isinstance(op, Operation):
        return op.grad_fn, True  # a LoopNode
    op_type = op._gradient_override or op._attrs.get("_gradient_op_type") or op._type
    found, fn = _reg.get_gradient(op_type)
    if not found:
        raise LookupError("No gradient defined for operation '%s' (op type: %s)"
                          % (op._name, op_type))
    return fn, _reg.gradient_needs_call(op_type)


def gradients(ys, xs, grad_ys=None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE) -> list:
    """Constructs symbolic derivatives of sum(`ys`) with respect to each x in `xs`.

    Args:
      ys: a Tensor or list of Tensors to differentiate.
      xs: a Tensor, Variable, or list of them to differentiate with respect to.
      grad_ys: optional list of Tensors of the shapes of `ys`, the initial gradients
        (default: ones).
      name: name scope for the gradient ops.
      colocate_gradients_with_ops: place each gradient op with its forward op.
      gate_gradients: if True, an op's input gradients are all computed before any is
        used (adds a `tuple`).
      aggregation_method: accepted for compatibility (`AggregationMethod`).
      stop_gradients: Tensors held constant: no gradient flows through them.
      unconnected_gradients: 'none' or 'zero': what to return for an x not reaching ys.

    Returns:
      A list with one entry per x: a Tensor, an IndexedSlices, or None.

    Raises:
      LookupError: an op on the path has no registered gradient.
      ValueError: `grad_ys` does not match `ys`, ys and xs of different graphs, an
        unknown aggregation_method, or arguments are malformed.
    """
    methods = (AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
               AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)
    if aggregation_method is not None and aggregation_method not in methods:
        raise ValueError("Invalid `aggregation_method` specified %s. Accepted values are %s."
                         % (aggregation_method, list(methods)))
    ys, xs_t, grad_ys, stop_ops = _arguments(ys, xs, grad_ys, stop_gradients)
    unconnected = _unconnected_mode(unconnected_gradients)
    graph = _graph_of(ys + xs_t) or get_default_graph()
    for t in ys + xs_t:
        if t.graph is not graph:
            raise ValueError("%s must be from the same graph as %s." % (t, (ys + xs_t)[0]))
    from tensorweave.framework import graph as _graph_mod
    with graph.as_default():
        with _graph_mod.name_scope(name, "gradients", ys + xs_t) as scope:
            grads = _seed_gradients(ys, grad_ys)
            # the TensorArray gradient source (TF's _GetGradSource) is the name scope of
            # the user's call: the walks of loop bodies, whose scopes - and, in
            # second-order gradients, whose forward op names - hold more "gradients"
            # components, keep it
            call = GradientCall(scope.rstrip("/"))
            # (the walk is called from here, not from a helper shared with
            # `nested_gradients`: every op built finds its user's line by walking up
            # the stack, frame by frame)
            _backprop(graph, _between_ops(ys, xs_t, stop_ops, call), grads, stop_ops,
                      colocate_gradients_with_ops, gate_gradients, call)
        # outside the call's name scope, as TF makes them: the zeros of unconnected xs
        return _results(grads, xs_t, unconnected)


def _unconnected_mode(value) -> UnconnectedGradients:
    """`gradients`' unconnected_gradients argument (a string or the enum) as the enum."""
    try:
        return UnconnectedGradients(getattr(value, "value", value))
    except ValueError:
        raise ValueError("Unknown value for unconnected_gradients: %r" % (value,)) from None


def nested_gradients(call: GradientCall, ys: List[Tensor], xs: List[Tensor],
                     grad_ys: list, name: str) -> list:
    """The gradients of `ys`, seeded with `grad_ys`, with respect to `xs`, built as part
    of `call`: the walk of a loop body (control_flow_grad._while_grad, with
    `call.backward_loop` set). `xs` also stop the walk: behind a loop body's inputs lies
    the loop machinery."""
    graph = _graph_of(ys + xs) or get_default_graph()
    from tensorweave.framework import graph as _graph_mod
    with graph.as_default(), _graph_mod.name_scope(name, "gradients", ys + xs):
        grads = _seed_gradients(ys, grad_ys)
        stop_ops = {x._op for x in xs}
        _backprop(graph, _between_ops(ys, xs, stop_ops, call), grads, stop_ops, False,
                  False, call)
        return _results(grads, xs, UnconnectedGradients.NONE)


def _arguments(ys, xs, grad_ys, stop_gradients) -> tuple:
    """`gradients`' arguments as (ys, xs, grad_ys: lists of Tensors (None for a default
    grad_y), the ops of stop_gradients)."""
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs_in = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    xs_t = [_x_tensor(x) for x in xs_in]
    ys = [convert_to_tensor(y) if not isinstance(y, Tensor) else y for y in ys]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    else:
        grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
        if len(grad_ys) != len(ys):
            raise ValueError("Length mismatch. Passed %d grad_ys for %d ys"
                             % (len(grad_ys), len(ys)))
    stop_gradients = ([] if stop_gradients is None else list(stop_gradients)
                      if isinstance(stop_gradients, (list, tuple)) else [stop_gradients])
    return ys, xs_t, grad_ys, {convert_to_tensor(s)._op for s in stop_gradients}


def _seed_gradients(ys: List[Tensor], grad_ys: list) -> Dict[Tensor, list]:
    """The gradients the walk starts from: `grad_ys`, ones (of y's dtype) where None.

    As in TF, an integer or boolean y gets ones too: gradients do not flow from
    integers into floating-point values (a Cast's gradient is None), so every x it
    depends on gets None."""
    grads: Dict[Tensor, list] = {}
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None:
            d = y.dtype.base_dtype
            if not (_differentiable(y) or d.is_integer or d.is_bool):
                raise TypeError("Tensor %s with type %s must be numeric to obtain a "
                                "default gradient." % (y, d.name))
            if d.is_complex:  # TF: the direction to differentiate in must be given
                raise TypeError("Gradients of complex tensors (%s) must set grad_ys "
                                "(y.dtype = %s)" % (y, d.name))
            gy = _ones_like(y, "grad_ys_%d" % i)
        else:
            gy = _as_tensor_or_slices(gy)
            if isinstance(gy, Tensor) and y.dtype.base_dtype is _dt.resource:
                # the gradient of a variable's handle is one of its value (TF's rule):
                # a while loop's gradient seeds a resource loop variable so
                if gy.dtype.base_dtype is _dt.resource:
                    raise TypeError("Input gradient %s for resource tensor %s should not "
                                    "be a resource" % (gy, y))
            elif isinstance(gy, Tensor) and gy.dtype.base_dtype is not y.dtype.base_dtype:
                raise TypeError("Gradient type %s generated for op %s does not match "
                                "the dtype %s of ys" % (gy.dtype.name, y.name,
                                                        y.dtype.name))
        grads.setdefault(y, []).append(gy)
    return grads


def _results(grads: Dict[Tensor, list], xs: List[Tensor],
             unconnected: UnconnectedGradients) -> list:
    """The summed gradient of each x (None or zeros where none reached it)."""
    results = []
    for x in xs:
        g = _aggregate(grads.get(x, []), "AddN")
        if g is None and unconnected is UnconnectedGradients.ZERO:
            g = _zeros_like_output(x)
        results.append(g)
    return results


def _x_tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        if x._op._type == "ReadVariableOp":
            # a plain read of a TF1 reference variable (`v.value()`, "v/read:0") is
            # the tensor every use of the variable reads in TF1: here each use has a
            # read of its own, so the variable's handle stands for all of them
            from tensorweave.ops.state.variables import variable_fed_by
            var = variable_fed_by(x)
            if var is not None:
                return var.handle
        return x
    handle = getattr(x, "handle", None)  # resource variables: differentiate the handle
    if isinstance(handle, Tensor):
        return handle
    if hasattr(x, "_get_variable_list"):  # TF1 converts xs as references, which a
        raise NotImplementedError(         # PartitionedVariable refuses
            "PartitionedVariable doesn't support being used as a reference.")
    return convert_to_tensor(x)


def _value_shape(x: Tensor):
    """The static shape of the value `x` stands for: a variable's, for its handle."""
    if x._dtype.base_dtype is _dt.resource:
        from tensorweave.ops.state import resource_variable_ops
        return resource_variable_ops.handle_shape(x)
    return x.shape


def _ones_like(y: Tensor, name: str) -> Tensor:
    from tensorweave.ops.array import array_ops
    import numpy as np
    from tensorweave.ops.array.constant_op import constant
    if y.shape.is_fully_defined():
        return constant(np.ones(y.shape.as_list(), dtype=y.dtype.as_numpy_dtype), name=name)
    return array_ops.ones_like(y, name=name)


def _backprop(graph, between: set, grads: Dict[Tensor, list], stop_ops: set,
              colocate: bool, gate: bool, call: GradientCall) -> None:
    # Pending counts: how many consumers inside `between` still owe a gradient.
    pending: Dict[Operation, int] = {}
    for op in between:
        for t in op._inputs:
            src = _node_of(t._op, call)
            if src in between:
                pending[src] = pending.get(src, 0) + 1
    ready = [op for op in between if pending.get(op, 0) == 0]
    ready.sort(key=lambda o: -o._id)
    from tensorweave.framework import graph as _graph_mod
    from tensorweave.ops.control_flow import structure
    while ready:
        op = ready.pop()
        out_grads = [_aggregate(grads.get(t, []), "AddN") if t in grads else None
                     for t in op._outputs]
        for t, g in zip(op._outputs, out_grads):
            if t in grads:
                grads[t] = [g] if g is not None else []
        if isinstance(op, Operation):
            has_grad = any(g is not None for g in out_grads)
        else:
            # a stopped loop output (its Exit among stop_gradients) passes nothing back
            out_grads = [None if t._op in stop_ops else g
                         for t, g in zip(op._outputs, out_grads)]
            # a while loop reached only through integer outputs (its iteration count)
            # passes no gradient back, as in TF, unless its pushed values have some
            has_grad = any(g is not None for t, g in zip(op._outputs, out_grads)
                           if _differentiable(t)) or op.has_pending_grads(call)
        if has_grad and op not in stop_ops and any(_node_of(t._op, call) in between
                                                   for t in op._inputs):
            fn, needs_call = _grad_fn_for(op)
            if fn is not None:
                # a Switch grad makes its own dead-aware zeros; a while loop its own
                # zeros, knowing which of its outputs had no gradient
                if isinstance(op, Operation) and op._type != "Switch":
                    out_grads = [g if g is not None else
                                 (_zeros_like_output(t) if _differentiable(t) else None)
                                 for t, g in zip(op._outputs, out_grads)]
                ctx = _graph_mod.colocate_with(op) if colocate and \
                    isinstance(op, Operation) else _nullcontext()
                with ctx, _graph_mod.name_scope(op._name + "_grad") as grad_scope, \
                        _xla_scope(op, grad_scope):
                    in_grads = fn(op, *out_grads, call=call) if needs_call else \
                        fn(op, *out_grads)
                    if not isinstance(in_grads, (list, tuple)):
                        in_grads = [in_grads]
                    in_grads = list(in_grads)
                    if len(in_grads) != len(op._inputs):
                        raise ValueError(
                            "Num gradients %d generated for op %s do not match num inputs "
                            "%d" % (len(in_grads), op._name, len(op._inputs)))
                    if gate:
                        # Gate only the gradients that are used: those of inputs on a
                        # path to xs (gating the others would force computing them).
                        in_grads = [g if _node_of(t._op, call) in between else None
                                    for t, g in zip(op._inputs, in_grads)]
                        if sum(isinstance(g, Tensor) for g in in_grads) > 1:
                            in_grads = _gate(in_grads, structure)
                for i, (t, g) in enumerate(zip(op._inputs, in_grads)):
                    if g is None or not _differentiable(t):
                        continue
                    if isinstance(g, Tensor) and t._dtype is not _dt.resource:
                        if g._dtype.base_dtype is not t._dtype.base_dtype:
                            raise TypeError("Gradient of %s has dtype %s, expected %s (op %s)"
                                            % (t.name, g.dtype.name, t.dtype.name,
                                               op._name))
                        # the gradient takes what the forward input's shape says (as
                        # TF's walk does): a TensorArray's or a loop's knows less alone
                        try:
                            g._shape = g._shape.merge_with(t._shape)
                        except ValueError:
                            raise ValueError(
                                "Incompatible shapes between op input and calculated input "
                                "gradient. Forward operation: %s. Input index: %d. Original "
                                "input shape: %s. Calculated input gradient shape: %s"
                                % (op._name, i, t.shape, g.shape)) from None
                    grads.setdefault(t, []).append(g)
        for t in op._inputs:
            src = _node_of(t._op, call)
            if src in pending:
                pending[src] -= 1
                if pending[src] == 0:
                    ready.append(src)


def _gate(in_grads, structure):
    idx = [i for i, g in enumerate(in_grads) if isinstance(g, Tensor)]
    gated = structure.tuple([in_grads[i] for i in idx])
    out = list(in_grads)
    for i, g in zip(idx, gated):
        out[i] = g
    return out


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def hessians(ys, xs, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method=None) -> list:
    """The Hessian of sum(`ys`) with respect to each x in `xs` (TF1 `tf.hessians`).

    Each result has shape `x.shape + x.shape`: row i is the gradient of the first
    gradient's i-th element. An x of fully defined shape gets its rows built one by one;
    otherwise a while loop computes them, as TF does.

    Returns:
      One Tensor per x (None where ys do not depend on x).
    """
    from tensorweave.framework import graph as _graph_mod
    from tensorweave.ops.array import array_ops
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    results = []
    with _graph_mod.name_scope(name):
        first = gradients(ys, xs, colocate_gradients_with_ops=colocate_gradients_with_ops,
                          gate_gradients=gate_gradients,
                          aggregation_method=aggregation_method)
        for x, g in zip(xs, first):
            x_t = _x_tensor(x)
            if g is None:
                results.append(None)
                continue
            flat = array_ops.reshape(convert_to_tensor(g), [-1])
            shape = _value_shape(x_t)
            if shape.is_fully_defined():
                n = shape.num_elements()
                rows = [array_ops.reshape(convert_to_tensor(
                    gradients(flat[i], x, unconnected_gradients="zero")[0]), [n])
                    for i in range(n)]
                results.append(array_ops.reshape(array_ops.stack(rows),
                                                 shape.as_list() + shape.as_list()))
            else:
                results.append(_hessian_loop(flat, x, x_t))
    return results


def _hessian_loop(flat: Tensor, x, x_t: Tensor) -> Tensor:
    """The Hessian rows of an x of unknown shape: a while loop over the elements of the
    flat gradient `flat`, each row a gradient taken in the loop body."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.control_flow.control_flow_ops import while_loop
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    value = x_t if x_t.dtype.base_dtype != _dt.resource else convert_to_tensor(x)
    n = array_ops.size(value)

    def row(j, rows):
        r = gradients(flat[j], x, unconnected_gradients="zero")[0]
        return j + 1, rows.write(j, array_ops.reshape(convert_to_tensor(r), [-1]))

    _, rows = while_loop(lambda j, _: j < n, row,
                         [0, TensorArray(value.dtype.base_dtype, n)])
    shape = array_ops.shape(value)
    return array_ops.reshape(rows.stack(), concat([shape, shape], 0))
