"""`tf.xla.experimental`: marking ops for XLA compilation.

tensorweave has no XLA compiler. `jit_scope` gives the ops built in it TF's attrs
(_XlaCompile, _XlaScope, _XlaSeparateCompiledGradients), gradients included, so graphs
written from here carry them to TensorFlow, and `compile` builds its computation in such
a scope; the kernels run as they always do, so the values are the ones TF computes
without XLA.
"""
import contextlib
from typing import Callable, List, Optional, Union

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export

_SCOPE_KEY = "__xla_scope"  # graph collection holding the jit scope counter (TF's)


class _XlaScope:
    """How many jit scopes the graph has opened, and how deep the current one is."""

    def __init__(self):
        self.count = 0
        self.depth = 0


@tf_export("xla.experimental.jit_scope")
@contextlib.contextmanager
def jit_scope(compile_ops: Union[bool, Callable] = True,
              separate_compiled_gradients: bool = False):
    """Marks the ops created inside for XLA compilation (attr `_XlaCompile`).

    Args:
      compile_ops: True, False, or a callable of an op's NodeDef returning a bool.
      separate_compiled_gradients: give the gradients of the scope's ops XLA scopes of
        their own (named after their gradient name scope).

    Yields:
      Nothing; ops built in the `with` block get the attrs. Nested scopes share the
      outermost one's `_XlaScope` ("jit_scope_N").
    """
    if callable(compile_ops):
        compile_attr = lambda node_def: bool(compile_ops(node_def))  # noqa: E731
    else:
        compile_attr = bool(compile_ops)
    attrs = {"_XlaCompile": compile_attr,
             "_XlaSeparateCompiledGradients": bool(separate_compiled_gradients)}
    counters = _graph.get_collection(_SCOPE_KEY)
    if counters:
        counter = counters[0]
    else:
        counter = _XlaScope()
        _graph.add_to_collection(_SCOPE_KEY, counter)
    if counter.depth == 0:
        attrs["_XlaScope"] = "jit_scope_%d" % counter.count
        counter.count += 1
    counter.depth += 1
    try:
        with _graph.get_default_graph()._attr_scope(attrs):
            yield
    finally:
        counter.depth -= 1


def gradient_attr_scope(op, grad_scope: str):
    """The attr scope the gradient of `op` is built in (TF's _MaybeCompile): none unless
    `op` is marked for compilation; then the forward op's XLA scope, or one of the
    gradient's own when its scope asked for separate gradients."""
    attrs = op._attrs
    # as TF's: an op lacking any of the three attrs counts as not compiled
    if attrs.get("_XlaCompile") is not True or "_XlaScope" not in attrs or \
            "_XlaSeparateCompiledGradients" not in attrs:
        return contextlib.nullcontext()
    xla_scope = attrs.get("_XlaScope", "")
    if attrs.get("_XlaSeparateCompiledGradients"):
        xla_scope = "%s_grad_%s" % (xla_scope, grad_scope.rstrip("/").replace("/", "_"))
    return op._graph._attr_scope({"_XlaCompile": True, "_XlaScope": xla_scope})


@tf_export("xla.experimental.compile")
def compile(computation: Callable, inputs: Optional[List] = None):  # noqa: A001
    """Builds `computation(*inputs)` marked for XLA compilation.

    Args:
      computation: a function of len(inputs) tensors returning tensors, operations, a
        structure of them, or None.
      inputs: the tensors passed to `computation`.

    Returns:
      The outputs as `computation` returns them, each tensor through an Identity named
      output_<i> that runs after the operations it returned: a dict as a dict, a tuple,
      list or single tensor as a list, and None or operations alone as a NoOp that runs
      after them (TF's rules).
    """
    from tensorweave.framework import nest
    from tensorweave.framework.graph import Operation, control_dependencies
    from tensorweave.framework.op_builder import convert_to_tensor
    from tensorweave.ops.control_flow.structure import group, identity
    inputs = [] if inputs is None else [convert_to_tensor(x) for x in inputs]
    with jit_scope():
        outputs = computation(*inputs)
    flat = nest.flatten(outputs) if outputs is not None else []
    ops = [o for o in flat if isinstance(o, Operation)]
    tensors = [(i, convert_to_tensor(o)) for i, o in enumerate(flat)
               if not isinstance(o, Operation)]
    if not tensors:
        with control_dependencies(ops):
            return group(*ops, name="output_0") if ops else group(name="output_0")
    with control_dependencies(ops):
        named = {i: identity(t, name="output_%d" % n) for n, (i, t) in enumerate(tensors)}
    flat = [named.get(i, o) for i, o in enumerate(flat)]
    if isinstance(outputs, dict):
        return nest.pack_sequence_as(outputs, flat)
    if isinstance(outputs, (list, tuple)):
        return list(nest.pack_sequence_as(outputs, flat))
    return [flat[0]]
