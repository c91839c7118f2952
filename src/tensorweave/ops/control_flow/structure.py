"""Ops that forward values or order execution: Identity, StopGradient, NoOp, group, tuple."""
from __future__ import annotations

import builtins
import contextlib
from typing import Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeListAttr, gradient, kernel, not_differentiable,
                                             register_op)

register_op("Identity", inputs=["input: T"], outputs=["output: T"],
            shape=lambda op: op._inputs[0]._shape)  # (attributes: a hot path)


@kernel("Identity")
def _identity_kernel(ctx, x):
    return x


@gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


def identity(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns a tensor with the same value as `input` (TF1 `tf.identity`)."""
    if hasattr(input, "_identity_for"):
        return input._identity_for(name)
    return apply_op("Identity", [input], name=name or "Identity")._outputs[0]


register_op("StopGradient", inputs=["input: T"], outputs=["output: T"],
            shape=lambda op: op.inputs[0].shape)


@kernel("StopGradient")
def _stop_gradient_kernel(ctx, x):
    return x


not_differentiable("StopGradient")


def stop_gradient(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Forwards `input`; gradients do not flow through it (TF1 `tf.stop_gradient`)."""
    if hasattr(input, "_stop_gradient_for"):  # a composite (RaggedTensor): its values
        return input._stop_gradient_for(name)
    return apply_op("StopGradient", [input], name=name or "StopGradient")._outputs[0]


register_op("NoOp")


@kernel("NoOp")
def _no_op_kernel(ctx):
    return None


not_differentiable("NoOp")


def no_op(name: Optional[str] = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor."""
    return apply_op("NoOp", [], name=name or "NoOp")


def _as_op(x) -> Operation:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    if hasattr(x, "op"):
        return x.op
    raise TypeError("Expected a Tensor or Operation, got %r" % (x,))


def group(*inputs, **kwargs) -> Operation:
    """An op that runs after all `inputs` (TF1 `tf.group`); has no output.

    Args:
      *inputs: Tensors, Operations, or (nested) lists of them.
      name: op name.

    Raises:
      TypeError: an unknown keyword argument.
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError("Unknown keyword arguments: " + ", ".join(kwargs))
    flat = []

    def walk(x):
        if isinstance(x, (list, builtins.tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for k in sorted(x):
                walk(x[k])
        elif x is not None:
            flat.append(_as_op(x))
    walk(inputs)
    g = flat[0].graph if flat else _graph.get_default_graph()
    with g.as_default(), g.name_scope(name or "group_deps") as scope:
        seen = []
        for op in flat:
            if op not in seen:
                seen.append(op)
        # one NoOp per device, then one that depends on those (TF1's structure)
        by_dev = {}
        for op in seen:
            by_dev.setdefault(op.device, []).append(op)
        if len(by_dev) <= 1:
            # all on one device: the NoOp too, as TF's (a group of ps updates runs there)
            dev = next(iter(by_dev), "")
            with g.device(dev) if dev else contextlib.nullcontext(), \
                    g.control_dependencies(seen):
                return no_op(name=scope)
        deps = []
        for dev in sorted(by_dev):
            with g.device(dev or None), g.control_dependencies(by_dev[dev]):
                deps.append(no_op(name="NoOp"))
        with g.control_dependencies(deps):
            return no_op(name=scope)


def tuple(tensors, name: Optional[str] = None, control_inputs=None):  # noqa: A001
    """Tensors with the same values that are only available after all of `tensors`
    (and `control_inputs`) are computed (TF1 `tf.tuple`).

    Args:
      tensors: Tensors, IndexedSlices, Operations, None, or values convertible to
        tensors.
      name: name scope (default "tuple").
      control_inputs: more Operations (or Tensors) to wait for.

    Returns:
      One entry per element of `tensors`: a gated copy of each tensor (each named
      `control_dependency`), a gated group of each Operation, None for None.

    Raises:
      ValueError: `tensors` holds no Tensor.
      TypeError: a control input that is neither a Tensor nor an Operation.
    """
    from tensorweave.framework.indexed_slices import IndexedSlices
    g = _graph.get_default_graph()
    with g.name_scope(name or "tuple"):
        tensors = [t if t is None or isinstance(t, (Tensor, Operation, IndexedSlices))
                   else convert_to_tensor(t) for t in tensors]
        gating = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        for c in control_inputs or []:
            if isinstance(c, Tensor):
                c = c.op
            elif not isinstance(c, Operation):
                raise TypeError("'control_inputs' must only contain Operation or Tensor. "
                                "Received: %s" % (c,))
            gating.append(c)
        if not gating:
            raise ValueError("'tensors' must have at least one Tensor. Received: %s."
                             % (tensors,))
        gate = group(*sorted(set(gating), key=lambda op: op._id))
        out = []
        for t in tensors:
            if isinstance(t, Operation):
                with g.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(None if t is None else with_dependencies([gate], t))
        return out


def with_dependencies(dependencies, output_tensor, name: Optional[str] = None):
    """`output_tensor` (a Tensor or IndexedSlices), computed only after `dependencies`
    (TF1 `tf.control_dependencies` applied to one value)."""
    from tensorweave.framework.indexed_slices import IndexedSlices
    g = _graph.get_default_graph()
    with g.name_scope(name or "control_dependency") as scope, \
            _graph.colocate_with(output_tensor), g.control_dependencies(dependencies):
        if isinstance(output_tensor, IndexedSlices):
            return IndexedSlices(identity(output_tensor.values, name=scope),
                                 output_tensor.indices, output_tensor.dense_shape)
        return identity(convert_to_tensor(output_tensor), name=scope)


register_op("IdentityN", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeListAttr()},
            shape=lambda op: [t.shape for t in op.inputs])


@kernel("IdentityN")
def _identity_n_kernel(ctx, *xs):
    return list(xs)


@gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


def identity_n(input, name: Optional[str] = None) -> list:  # noqa: A002
    """Returns a list of tensors with the same values as the tensors in `input`."""
    return list(apply_op("IdentityN", [list(input)], name=name or "IdentityN")._outputs)
