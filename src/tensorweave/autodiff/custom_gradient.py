"""`tf.custom_gradient` and `tf.RegisterGradient` for graph mode.

A custom gradient is attached by routing the function's outputs through an IdentityN op
whose gradient is overridden (via `Graph.gradient_override_map`) with a gradient function
registered once per decorated call.
"""
from __future__ import annotations

import functools
import inspect
import itertools
from typing import Callable

from tensorweave.framework import nest
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Tensor, get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor

_custom_ids = itertools.count()


class RegisterGradient:
    """Decorator registering a gradient function for an op type (TF1
    `tf.RegisterGradient`).

    Args:
      op_type: the op type name (or a name used with `gradient_override_map`).

    Raises:
      KeyError: a gradient is already registered under `op_type`.
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        _reg.gradient(self._op_type)(fn)
        return fn


def custom_gradient(f: Callable) -> Callable:
    """Decorator for a function `f(*x) -> (y, grad_fn)` whose gradient is `grad_fn(*dy)`.

    The arguments `x` and the result `y` may be nested structures of tensors; `grad_fn`
    takes one gradient per tensor of `y` (flattened) and returns one per tensor of `x`
    (any nesting, flattened in the same order). When `y` depends on
    variables other than through `x`, `grad_fn` must take a keyword argument
    `variables`: it is called with the list of those variables (sorted by name) and
    returns (input gradients, one gradient per variable), as in TF1. Nothing flows
    through `f`'s own ops: its inputs and variables get exactly what `grad_fn` says.

    Returns:
      A function computing `y` whose gradient (in `tf.gradients`) is `grad_fn`.

    Raises:
      TypeError: `y` uses variables and `grad_fn` takes no `variables`, or `f` created
        a TF1 reference variable (not a resource variable).
    """
    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords "
                             "arguments only when eager execution is enabled.")
        from tensorweave.ops.control_flow.structure import identity_n
        # (nested) arguments are converted leaf by leaf, as TF does
        args = nest.map_structure(convert_to_tensor, args)
        flat_args = nest.flatten(args)
        before = _all_variables()
        result, grad_fn = f(*args)
        if any(_is_ref_variable(v) for k, v in _all_variables().items() if k not in before):
            raise TypeError("All variables used by a function wrapped with @custom_gradient "
                            "must be `ResourceVariable`s. Ensure that no `variable_scope` "
                            "is created with `use_resource=False`.")
        flat = [convert_to_tensor(r) for r in nest.flatten(result)]
        variables = _dependent_variables(flat_args, flat)
        params = inspect.signature(grad_fn).parameters.values()
        takes_variables = any(p.name == "variables" or p.kind is p.VAR_KEYWORD
                              for p in params)
        if variables and not takes_variables:
            raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument "
                            "'variables', since function uses variables: %s" % variables)
        name = "CustomGradient-%d" % next(_custom_ids)
        n_out = len(flat)

        def _grad(op, *grads):
            if variables:
                in_grads, var_grads = grad_fn(*grads[:n_out], variables=variables)
                var_grads = list(var_grads)
                if len(var_grads) != len(variables):
                    raise ValueError("Must return gradient for each variable from "
                                     "@custom_gradient grad_fn.")
            else:
                in_grads, var_grads = grad_fn(*grads[:n_out]), []
            in_grads = nest.flatten(in_grads)
            if len(in_grads) != len(flat_args):
                raise ValueError("custom_gradient function expected to return %d gradients, "
                                 "but returned %d instead." % (len(flat_args), len(in_grads)))
            return [None] * n_out + in_grads + var_grads

        _reg.gradient(name)(_grad)
        # the variables' values enter too, so that their gradients reach them
        values = [convert_to_tensor(v) for v in variables]
        with get_default_graph().gradient_override_map({"IdentityN": name}):
            outs = identity_n(flat + flat_args + values)
        return nest.pack_sequence_as(result, list(outs[:n_out]))
    return decorated


def _all_variables() -> dict:
    from tensorweave.framework.graph import GraphKeys
    g = get_default_graph()
    return {id(v): v for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES)
            for v in g.get_collection(key)}


def _is_ref_variable(v) -> bool:
    from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
    handle = getattr(v, "_handle", None)
    return handle is not None and bool(handle.op._attrs.get(REF_VARIABLE_ATTR))


def _dependent_variables(args, outputs) -> list:
    """The variables whose handles `outputs` reach through data edges that do not pass
    through `args` (TF's get_dependent_variables), sorted by name."""
    from tensorweave.ops.state.variables import _variable_of_handle_op
    stop = {id(a) for a in args}
    seen, found = set(), {}
    stack = [t for t in outputs if id(t) not in stop]
    while stack:
        op = stack.pop()._op
        if op in seen:
            continue
        seen.add(op)
        if op._type == "VarHandleOp":
            v = _variable_of_handle_op(op)
            if v is not None:
                found[id(v)] = v
            continue
        stack.extend(t for t in op._inputs if id(t) not in stop)
    return sorted(found.values(), key=lambda v: v.name)


def grad_pass_through(f: Callable) -> Callable:
    """`f` with an identity gradient (TF1 `tf.grad_pass_through`): the wrapped call
    computes `f(*args)`, and tf.gradients passes each output's gradient straight to the
    argument in the same position, as if `f` were the identity. Variables `f` uses get
    no gradient through it.

    Example: `y = tf.grad_pass_through(x.assign)(z ** 2)` assigns z ** 2 to x, and the
    gradient of y with respect to z is 2 z.

    Args:
      f: a function of tensors returning as many tensors as it takes.

    Returns:
      The wrapped function.
    """
    def pass_through(*dys, variables=None):
        return dys if variables is None else (dys, [None] * len(variables))

    @functools.wraps(f)
    def wrapped(*args):
        @custom_gradient
        def _pass_through(*xs):
            return f(*xs), pass_through
        return _pass_through(*args)
    return wrapped


def recompute_grad(f: Callable) -> Callable:
    """`f` whose intermediate values are not kept for its gradient but computed again
    when the gradient runs (TF1 `tf.recompute_grad`): less memory for a second forward
    pass. `f` takes tensors and returns one tensor; the variables it reads get their
    gradients too. `f` runs twice, so it must not create variables.

    Args:
      f: the function to wrap.

    Returns:
      The wrapped function.
    """
    @functools.wraps(f)
    def wrapped(*args):
        from tensorweave.autodiff.gradients import gradients
        g = get_default_graph()

        @custom_gradient
        def inner(*xs):
            def grad(dresult, variables=None):
                with g.control_dependencies([dresult]):
                    again = f(*xs)
                sources = list(xs) + list(variables or ())
                grads = gradients(again, sources, grad_ys=[dresult])
                if variables is None:
                    return grads
                return grads[:len(xs)], grads[len(xs):]
            return f(*xs), grad
        return inner(*args)
    return wrapped


def is_tensor(x) -> bool:
    """True if `x` is a graph tensor-like object (TF1 `tf.is_tensor`): a Tensor, a
    variable, or a composite of tensors (SparseTensor, IndexedSlices, RaggedTensor)."""
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor  # ops import autodiff
    return isinstance(x, (Tensor, SparseTensor, IndexedSlices, RaggedTensor)) or \
        hasattr(x, "_as_graph_element")
