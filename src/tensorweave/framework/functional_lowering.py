"""Functional ops of imported GraphDefs, lowered to tensorweave's own control flow.

TF 2.x writes tf.cond / tf.while_loop as If / While ops (and their Stateless forms),
tf.switch_case as Case, and tf.function calls as (Stateful)PartitionedCall ops or as
nodes whose op type is a library function; branches, bodies and callees are FunctionDefs
of the GraphDef's library (function_library.py). TF's runtime lowers them to
Switch/Merge/Enter/Exit dataflow and inlines the calls before running (lower_if_op.cc,
lower_while_op.cc, function inlining). The importer does the same here, with
tensorweave's builders, so that both executors, partitioning and tf.gradients see
ordinary ops:

    If, StatelessIf        tf.cond(input 0, then_branch(*rest), else_branch(*rest))
    Case, StatelessCase    tf.switch_case(input 0, [branch(*rest) for branches]),
                           singleton results kept as lists
    While, StatelessWhile  tf.while_loop(cond, body, all inputs, output_shapes as the
                           shape invariants, parallel_iterations)
    calls                  the callee's body imported in place (inlined)

A function body is imported with its input args bound to the actual input tensors (it
may hold functional ops itself: they lower in turn). Its control_ret nodes run before
its outputs are returned. The lowered result keeps the node's name: an Identity (one
output), an IdentityN (several) or a NoOp (none) of that name stands after it, so
"name:i" and "^name" keep their meaning. The node's control inputs come before the
whole lowered subgraph (its inputs pass through identities that wait for them) and its
device applies to every lowered op.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Dict, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import function_library as _flib
from tensorweave.framework import serialize as _ser
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.shapes import TensorShape

# (outputs, side effects): what a lowering gives; side effects are Operations that the
# named node waits for when there are no outputs
Lowered = Tuple[List[Tensor], List[Operation]]


def is_functional(nd: "_ser.NodeDef", library) -> bool:
    """Whether the importer lowers `nd`: a functional op, or a call of a library
    function."""
    return nd.op in _flib.FUNCTIONAL_OPS or nd.op in library


def lower_node(importer: "_ser.NodeImporter", nd: "_ser.NodeDef", inputs: List[Tensor],
               controls: list, full_name: str) -> Operation:
    """Builds the lowered form of the functional node `nd` from its input tensors.

    Args:
      importer: the NodeImporter of the graph (or body) `nd` belongs to.
      nd: the node.
      inputs: its data inputs, as tensors of the graph.
      controls: its control inputs (Operations).
      full_name: the name its op takes in the graph.

    Returns:
      The op named `full_name` that stands for the node's outputs and side effects.

    Raises:
      ValueError: a malformed node or function, or one tensorweave does not support.
      InvalidArgumentError: a function not in the library.
    """
    g = importer.graph
    parent, _, base = full_name.rpartition("/")
    lowering = _LOWERINGS.get(nd.op, _lower_call)
    with contextlib.ExitStack() as stack:
        stack.enter_context(g.name_scope(parent + "/" if parent else None))
        if nd.device:
            stack.enter_context(g.device(nd.device))
        if controls:
            inputs = _after(g, controls, inputs)
            if not inputs:
                stack.enter_context(g.control_dependencies(controls))
        outputs, effects = lowering(importer, nd, inputs, base)
    return _named_result(importer, nd, outputs, effects)


def _after(g, controls: list, inputs: List[Tensor]) -> List[Tensor]:
    """`inputs` passed through identities that run after `controls`."""
    from tensorweave.ops.control_flow.structure import identity
    with g.control_dependencies(controls):
        return [identity(t) for t in inputs]


def _named_result(importer, nd, outputs: List[Tensor], effects: List[Operation]
                  ) -> Operation:
    """The op of `nd`'s name: Identity / IdentityN of the outputs, or a NoOp after the
    side effects when there are none."""
    dtypes = [t.dtype for t in outputs]
    if not outputs:
        node = _ser.NodeDef(nd.name, "NoOp", [], nd.device)
        return importer.create(node, [], effects)
    if len(outputs) == 1:
        node = _ser.NodeDef(nd.name, "Identity", [], nd.device, {"T": dtypes[0]})
    else:
        node = _ser.NodeDef(nd.name, "IdentityN", [], nd.device, {"T": dtypes})
    return importer.create(node, outputs, [])


# --- calling a function ------------------------------------------------------------------
def call_function(importer, func, args: List[Tensor], node: str) -> Lowered:
    """Imports the body of the function `func` (a FuncAttr: name and the caller's attrs)
    with its input args bound to `args`.

    Returns:
      (its outputs, its control_ret ops); the outputs come after those ops.
    """
    fdef = importer.library.lookup(func.name, node)
    if len(args) != len(fdef.input_args):
        raise ValueError("Node '%s' calls function '%s' with %d inputs; it takes %d"
                         % (node, fdef.name, len(args), len(fdef.input_args)))
    inst = _flib.instantiate(fdef, func.attr, importer.library)
    bound = dict(zip(inst.arg_names, args))
    created = importer.import_body(inst.nodes, bound)
    effects = [created[n] for n in inst.control_outputs]
    outputs = [bound[src] if index is None else created[src]._outputs[index]
               for src, index in inst.outputs]
    if effects and outputs:
        outputs = _after(importer.graph, effects, outputs)
    return outputs, effects


def _func_attr(nd, key: str):
    value = nd.attr.get(key)
    if value is None or not hasattr(value, "attr"):
        raise ValueError("Node '%s' (op %s) has no function attr '%s'" % (nd.name, nd.op, key))
    return value


def _branch(importer, func, args: List[Tensor], node: str) -> Callable:
    """A cond / switch_case branch calling `func`: its outputs as a list, or an op
    grouping its side effects when it has no outputs."""
    def branch():
        from tensorweave.ops.control_flow.structure import group
        outputs, effects = call_function(importer, func, args, node)
        return list(outputs) if outputs else group(*effects)
    return branch


def _results(result) -> Lowered:
    """(outputs, side effects) of what cond / switch_case returned."""
    if isinstance(result, Operation):
        return [], [result]
    if isinstance(result, Tensor):
        return [result], []
    return list(result), []


def _as_bool(t: Tensor, node: str) -> Tensor:
    """A predicate as TF's functional ops read it: a number is true when nonzero."""
    if t.dtype.base_dtype == _dt.bool:
        return t
    if not (t.dtype.is_integer or t.dtype.is_floating):
        raise ValueError("Node '%s': a %s predicate is not supported by tensorweave's "
                         "lowering of functional ops" % (node, t.dtype.name))
    from tensorweave.ops.math.math_ops import cast
    return cast(t, _dt.bool)


# --- one lowering per op -----------------------------------------------------------------
def _lower_if(importer, nd, inputs: List[Tensor], base: str) -> Lowered:
    from tensorweave.ops.control_flow.control_flow_ops import cond
    args = inputs[1:]
    result = cond(_as_bool(inputs[0], nd.name),
                  _branch(importer, _func_attr(nd, "then_branch"), args, nd.name),
                  _branch(importer, _func_attr(nd, "else_branch"), args, nd.name),
                  strict=True, name=base)
    return _holding_declared_shapes(nd, _results(result))


def _lower_case(importer, nd, inputs: List[Tensor], base: str) -> Lowered:
    from tensorweave.ops.control_flow.case_ops import switch_case_chain
    branches = nd.attr.get("branches") or []
    if not branches:
        raise ValueError("Node '%s' (op %s) has no branches" % (nd.name, nd.op))
    args = inputs[1:]
    result = switch_case_chain(
        inputs[0], [_branch(importer, f, args, nd.name) for f in branches], True, base)
    return _holding_declared_shapes(nd, _results(result))


def _lower_while(importer, nd, inputs: List[Tensor], base: str) -> Lowered:
    from tensorweave.ops.control_flow.control_flow_ops import while_loop
    cond_f, body_f = _func_attr(nd, "cond"), _func_attr(nd, "body")

    def cond(*loop_vars):
        outputs, _ = call_function(importer, cond_f, list(loop_vars), nd.name)
        return _as_bool(outputs[0], nd.name)

    shapes = _declared_shapes(nd, len(inputs))
    invariants = None if shapes is None else [
        _invariant(t, shape) for t, shape in zip(inputs, shapes)]

    def body(*loop_vars):
        # TF's While op holds each body output to its output_shapes entry too
        outputs = call_function(importer, body_f, list(loop_vars), nd.name)[0]
        _hold(outputs, shapes)
        return outputs

    result = list(while_loop(cond, body, list(inputs), shape_invariants=invariants,
                             parallel_iterations=nd.attr.get("parallel_iterations", 10),
                             name=base, return_same_structure=True))
    return _hold(result, shapes), []


def _declared_shapes(nd, count: int) -> Optional[List[TensorShape]]:
    """The output_shapes attr of a functional node with `count` outputs (None when it
    does not give one shape per output: shape functions infer them then)."""
    shapes = nd.attr.get("output_shapes") or None
    if shapes is None or len(shapes) != count:
        return None
    return [TensorShape(s) for s in shapes]


def _hold(tensors: List[Tensor], shapes: Optional[List[TensorShape]]) -> List[Tensor]:
    """`tensors` given the shapes their functional node declares: TF's shape refiner
    may know more than tensorweave's shape functions infer (a value popped from a
    TensorList, zeros of a variable's shape)."""
    for t, shape in zip(tensors, shapes or ()):
        if t.shape.is_compatible_with(shape):
            t.set_shape(shape)
    return tensors


def _holding_declared_shapes(nd, lowered: Lowered) -> Lowered:
    outputs, effects = lowered
    return _hold(outputs, _declared_shapes(nd, len(outputs))), effects


def _invariant(loop_input: Tensor, shape: TensorShape) -> TensorShape:
    """The shape invariant of a loop variable whose While op output shape is `shape`.

    TF takes output_shapes as given; tf.while_loop wants an invariant no more specific
    than the initial value (TF's shape refiner may know more of an input than
    tensorweave's shape functions: a zeros of a computed shape): the most specific
    shape compatible with both then, the outputs taking `shape` after the loop.
    """
    if shape.is_compatible_with(loop_input.shape):
        return shape.most_specific_compatible_shape(loop_input.shape)
    return shape  # incompatible: while_loop reports it


def _lower_call(importer, nd, inputs: List[Tensor], base: str) -> Lowered:
    """A (Stateful)PartitionedCall, or a node whose op is a library function (its attrs
    bind the function's placeholders): the callee inlined."""
    from tensorweave.framework.graph_def_proto import FuncAttr
    if nd.op in ("PartitionedCall", "StatefulPartitionedCall"):
        func = _func_attr(nd, "f")
    else:
        func = FuncAttr(nd.op, nd.attr)
    with importer.graph.name_scope(base):
        return call_function(importer, func, inputs, nd.name)


_LOWERINGS: Dict[str, Callable] = {
    "If": _lower_if, "StatelessIf": _lower_if,
    "Case": _lower_case, "StatelessCase": _lower_case,
    "While": _lower_while, "StatelessWhile": _lower_while,
}
