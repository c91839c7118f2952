"""Gradients of the TensorArray data ops (EuroSys 2018 §5.2).

Each forward array has, per gradient source (the "gradients..." name scope the backward
graph is built in), one gradient array created by TensorArrayGradV3. The duals:
Read <-> Write, Gather <-> Scatter (stack/unstack use these), Concat <-> Split. The flow
outputs carry the ordering: a read's gradient writes into the gradient array and
returns that write's flow as the gradient of the read's flow input; the gradient of the
flow output of a write (the sum of the flows of everything that read it) orders the
read of the gradient array after all those writes.

The gradient source comes from the GradientCall being built (`needs_call=True`): the
name scope of the user's tf.gradients call, also when a loop body is differentiated in
a nested walk with scopes of its own.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.autodiff.gradient_call import GradientCall
from tensorweave.framework import graph as _graph
from tensorweave.framework.registry import gradient


def _grad_source(grad, call: Optional[GradientCall]) -> str:
    """The gradient source: the name scope of the user's tf.gradients call being built
    (`call`); without one, the current name scope (or the op name of `grad`) up to and
    including its last component starting with "gradients" (TF's _GetGradSource)."""
    if call is not None:
        return call.source
    candidates = [_graph.get_default_graph().get_name_scope()]
    op = getattr(grad, "op", None)
    if op is not None:
        candidates.append(op.name)
    for name in candidates:
        tokens = name.split("/")
        pos = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
        if pos:
            return "/".join(tokens[:pos[-1] + 1])
    raise ValueError("Expected op/tensor name to start with gradients (excluding scope), "
                     "got: %s" % candidates[-1])


def _grad_array(op, flow, source: str):
    """The gradient TensorArray of the forward array `op` works on, ordered after
    `flow`."""
    from tensorweave.ops.data_flow.tensor_array_class import TensorArray
    dtype = op._get_attr("dtype") if "dtype" in op.attrs else op._get_attr("T")
    forward = TensorArray(dtype=dtype, handle=op.inputs[0], flow=flow,
                          colocate_with_first_write_call=False)
    return forward.grad(source=source, flow=flow)


def _after(flow_out, flow):
    """`flow` made to wait for `flow_out` (a forward write's result): the gradient array
    must not be created/read before the forward op that defined the element ran."""
    from tensorweave.ops.control_flow import structure
    barrier = structure.identity(flow_out, name="flow_out")
    with _graph.control_dependencies([barrier]):
        return structure.identity(flow, name="write_barrier")


@gradient("TensorArrayReadV3", needs_call=True)
def _read_grad(op, grad, *, call: Optional[GradientCall] = None):
    source = _grad_source(grad, call)
    g = _grad_array(op, op.inputs[2], source)
    w = g.write(op.inputs[1], grad)
    return [None, None, w.flow]


@gradient("TensorArrayWriteV3", needs_call=True)
def _write_grad(op, flow, *, call: Optional[GradientCall] = None):
    source = _grad_source(flow, call)
    flow = _after(op.outputs[0], flow)
    g = _grad_array(op, flow, source)
    return [None, None, g.read(op.inputs[1]), flow]


@gradient("TensorArrayGatherV3", needs_call=True)
def _gather_grad(op, grad, *, call: Optional[GradientCall] = None):
    source = _grad_source(grad, call)
    g = _grad_array(op, op.inputs[2], source)
    u = g.scatter(op.inputs[1], grad)
    return [None, None, u.flow]


@gradient("TensorArrayScatterV3", needs_call=True)
def _scatter_grad(op, flow, *, call: Optional[GradientCall] = None):
    source = _grad_source(flow, call)
    flow = _after(op.outputs[0], flow)
    g = _grad_array(op, flow, source)
    return [None, None, g.gather(op.inputs[1]), flow]


@gradient("TensorArrayConcatV3", needs_call=True)
def _concat_grad(op, grad, unused_lengths_grad, *, call: Optional[GradientCall] = None):
    source = _grad_source(grad, call)
    g = _grad_array(op, op.inputs[1], source)
    u = g.split(grad, lengths=op.outputs[1])
    return [None, u.flow]


@gradient("TensorArraySplitV3", needs_call=True)
def _split_grad(op, flow, *, call: Optional[GradientCall] = None):
    source = _grad_source(flow, call)
    flow = _after(op.outputs[0], flow)
    g = _grad_array(op, flow, source)
    return [None, g.concat(), None, flow]
