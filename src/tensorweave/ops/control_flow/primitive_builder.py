"""Control-flow primitives (Switch, Merge, Enter, Exit, NextIteration, LoopCond,
Identity) made without `apply_op`'s general path, for the builders of cond and
while_loop (control_flow_ops.py), which make hundreds of them for one TF 2.x loop that
an import lowers (framework/functional_lowering.py).

Those builders pass Tensors of the default graph of one dtype (but a Switch's bool
predicate): apply_op's conversions and type inference have nothing to do for them. Any
other inputs go through apply_op, with its conversions, checks and errors.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import op_builder
from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import get_op_def


def make_primitive(op_type: str, inputs: list, name: str,
                   attrs: Optional[dict] = None) -> Operation:
    """The op `apply_op(op_type, inputs, attrs, name=name)` makes (a Merge's inputs
    given as one list), made directly when `inputs` allow it: the same attrs in the
    same order, output dtypes, shapes and name, and op callbacks see it.

    Args:
      op_type: one of the primitives (one type attr "T", a Merge's count "N").
      inputs: the op's inputs, flat.
      name: the op's name (made unique).
      attrs: its attrs but "T" and "N" (an Enter's frame, ...).

    Returns:
      The new Operation.

    Raises:
      TypeError, ValueError: as apply_op (for inputs it makes the op of).
    """
    g = get_default_graph()
    op_def = get_op_def(op_type)
    dtype = _direct_dtype(op_type, op_def, inputs, g)
    if dtype is None:
        return apply_op(op_type, [inputs] if op_type == "Merge" else inputs, attrs,
                        name=name)
    full = dict(attrs) if attrs else {}
    if "T" in op_def.attrs:
        full["T"] = dtype
    if op_type == "Merge":
        full["N"] = len(inputs)
    return op_builder.create_op(g, op_type, inputs, full, op_def, name)


def _direct_dtype(op_type: str, op_def, inputs: list, g) -> Optional[_dt.DType]:
    """The dtype of a primitive's `inputs` when `make_primitive` may make it directly:
    Tensors of `g`, all of one dtype its "T" allows (a Switch's predicate: bool);
    None otherwise."""
    data = inputs[:-1] if op_type == "Switch" else inputs
    if not data or type(data[0]) is not Tensor:
        return None
    dtype = data[0]._dtype
    for t in inputs:  # (a loop: most primitives have one or two inputs)
        if type(t) is not Tensor or t._op._graph is not g:
            return None
    for t in data:
        if t._dtype is not dtype:
            return None
    if op_type == "Switch" and inputs[-1]._dtype is not _dt.bool:
        return None
    allowed = getattr(op_def.attrs.get("T"), "allowed", None)
    return dtype if allowed is None or dtype in allowed else None
