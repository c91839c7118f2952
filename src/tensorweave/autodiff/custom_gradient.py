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

from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Tensor, get_default_graph
from tensorweave.framework.op_builder import convert_to_tensor

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

    `grad_fn` returns one gradient per input tensor of `f`. Functions that create or read
    variables and declare a `variables` argument in `grad_fn` are not supported.

    Returns:
      A function computing `y` whose gradient (in `tf.gradients`) is `grad_fn`.
    """
    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords "
                             "arguments only when eager execution is enabled.")
        from tensorweave.ops.control_flow.structure import identity_n
        args = [convert_to_tensor(a) for a in args]
        result, grad_fn = f(*args)
        if "variables" in inspect.signature(grad_fn).parameters:
            raise NotImplementedError("custom_gradient: grad_fn with a `variables` argument "
                                      "is not supported by tensorweave in graph mode")
        flat = list(result) if isinstance(result, (list, tuple)) else [result]
        flat = [convert_to_tensor(r) for r in flat]
        name = "CustomGradient-%d" % next(_custom_ids)
        n_out = len(flat)

        def _grad(op, *grads):
            in_grads = grad_fn(*grads[:n_out])
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            if len(in_grads) != len(args):
                raise ValueError("custom_gradient function expected to return %d gradients, "
                                 "but returned %d instead." % (len(args), len(in_grads)))
            return [None] * n_out + in_grads

        _reg.gradient(name)(_grad)
        with get_default_graph().gradient_override_map({"IdentityN": name}):
            outs = identity_n(flat + args)
        outs = outs[:n_out]
        if isinstance(result, (list, tuple)):
            return type(result)(outs) if not hasattr(result, "_fields") else type(result)(*outs)
        return outs[0]
    return decorated


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
    @functools.wraps(f)
    def wrapped(*args):
        @custom_gradient
        def _pass_through(*xs):
            return f(*xs), lambda *dys: dys
        return _pass_through(*args)
    return wrapped


def is_tensor(x) -> bool:
    """True if `x` is a graph tensor-like object (TF1 `tf.is_tensor`)."""
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")
