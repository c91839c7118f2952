"""Gradients through tf.cond (EuroSys 2018 §5.1): the gradient of a Merge switches the
incoming gradient on the cond's predicate; the gradient of a Switch merges the gradients
of its two sides. Each runs only on the side taken, exactly like the forward cond.

Gradients of gathers (IndexedSlices) stay sparse, as in TF, so optimizers update only the
rows read: a Merge's gradient switches their components, a Switch's gradient merges them
(a dense side becoming all its rows). In a backward loop (control_flow_grad.py) a
Merge's gradient also records the pivots that pops from its branches wait on.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.autodiff.gradient_call import GradientCall
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices, static_dense_shape
from tensorweave.framework.registry import gradient
from tensorweave.ops.control_flow import control_flow_ops as cf


@gradient("Merge", needs_call=True)
def _merge_grad(op: Operation, grad, _, *, call: Optional[GradientCall] = None):
    pred = op._cond_pred
    if pred is None:
        raise LookupError("Merge %s is not the output of a tf.cond; loops built from raw "
                          "primitives cannot be differentiated (use tf.while_loop)." % op.name)
    g_false, g_true = _switch_grad_value(grad, pred)
    bw = call.backward_loop if call is not None else None
    if bw is not None:
        # built in a backward loop: pops of forward values from this cond's branches run
        # only on the side taken (through Identity pivots: a control edge carries its
        # source's liveness, and only an Identity has the liveness of one Switch side)
        bw.cond_pivots[(pred, 0)] = cf._identity(_values_of(g_false), "pivot_f")
        bw.cond_pivots[(pred, 1)] = cf._identity(_values_of(g_true), "pivot_t")
    if len(op.inputs) != 2:
        return [g_true if i == 1 else g_false for i in range(len(op.inputs))]
    return [g_false, g_true]


def _values_of(g) -> Tensor:
    return g.values if isinstance(g, IndexedSlices) else g


def _switch_grad_value(grad, pred) -> tuple:
    """(false side, true side) of a gradient switched on `pred`: an IndexedSlices
    component by component (TF's `switch` of a composite), so it stays sparse."""
    if not isinstance(grad, IndexedSlices):
        return cf.switch(grad, pred)
    parts = [cf.switch(grad.values, pred), cf.switch(grad.indices, pred)]
    if grad.dense_shape is not None:
        # a dense shape known at build time stays that constant on both sides (the
        # slices are dead through their values and indices); converting them to dense
        # then knows the size
        parts.append((grad.dense_shape,) * 2 if static_dense_shape(grad) is not None
                     else cf.switch(grad.dense_shape, pred))
    return tuple(IndexedSlices(*[p[side] for p in parts]) for side in (0, 1))


def _merge_grads(grads: list, pred: Tensor):
    """The Merge of the gradients of a cond's sides, differentiable again on `pred`
    (`Merge._cond_pred`). Dense when all are Tensors; otherwise, as TF's `merge`, all are
    made IndexedSlices (a Tensor as all its rows, its shape computed at run time so it
    keeps its side's deadness) and merged component by component.

    Raises:
      ValueError: IndexedSlices of which some but not all have a dense_shape.
    """
    if all(isinstance(g, Tensor) for g in grads):
        m, _ = cf.merge(grads)
        m._op._cond_pred = pred
        return m
    from tensorweave.framework.indexed_slices import as_indexed_slices_list
    from tensorweave.ops.array.constant_op import constant
    slices = as_indexed_slices_list(grads, optimize=False)
    with_shape = [s.dense_shape is not None for s in slices]
    if any(with_shape) and not all(with_shape):
        raise ValueError("Cannot merge IndexedSlices of which some but not all have a "
                         "dense_shape: %s" % slices)
    names = ["values", "indices"] + (["dense_shape"] if all(with_shape) else [])
    merged = []
    for i, name in enumerate(names):
        parts = [(s.values, s.indices, s.dense_shape)[i] for s in slices]
        if i == 2:
            # the sides' shapes are the shape of the switched value: one known at build
            # time stays a constant (converting the slices to dense needs no warning)
            static = [static_dense_shape(s) for s in slices]
            if static[0] is not None and all(v is not None and np.array_equal(v, static[0])
                                             for v in static):
                merged.append(constant(static[0], dtype=parts[0].dtype.base_dtype))
                continue
        m, _ = cf.merge(parts, name="Merge_" + name)
        m._op._cond_pred = pred
        merged.append(m)
    return IndexedSlices(*merged)


@gradient("Switch", needs_call=True)
def _switch_grad(op: Operation, g_false, g_true, *, call: Optional[GradientCall] = None):
    from tensorweave.autodiff.gradients import zeros_like_gradient
    if g_false is None and g_true is None:
        return [None, None]
    # zeros that are dead exactly when their side is not taken: computed from a new
    # switch of the input (in a backward loop the input and predicate are popped, live
    # in every iteration, rather than the forward side, which exists only when taken).
    # For a variable's handle, zeros like the variable's value: the gradient of a handle
    # is the gradient of its reads.
    if g_false is None:
        g_false = zeros_like_gradient(cf.switch(op.inputs[0], op.inputs[1])[0],
                                      optimize=False)
    if g_true is None:
        g_true = zeros_like_gradient(cf.switch(op.inputs[0], op.inputs[1])[1],
                                     optimize=False)
    if g_false is None or g_true is None:
        # a resource that names no known variable has no zeros: the gradient of the
        # side taken goes on alone (TF's "cond_resource_grad")
        g_false = g_true = g_true if g_false is None else g_false
    from tensorweave.framework.op_builder import convert_to_tensor
    grads = [g if isinstance(g, IndexedSlices) else convert_to_tensor(g)
             for g in (g_false, g_true)]
    # differentiable again: on the predicate as seen here (in a backward loop, popped);
    # an IndexedSlices (a gather's gradient on one side) stays sparse, the other side's
    # dense gradient becoming all its rows, as TF merges them
    bw = call.backward_loop if call is not None else None
    pred = bw.loop.resolve(op._inputs[1]) if bw is not None else op._inputs[1]
    return [_merge_grads(grads, pred), None]
