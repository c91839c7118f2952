"""The object that carries one gradient computation's control-flow bookkeeping.

A user's `tf.gradients` call makes one `GradientCall`. Gradients through while loops
are built in further walks of loop bodies (ops/control_flow/control_flow_grad.py); those
walks belong to the same computation and get the same object as an argument
(autodiff/gradients.nested_gradients), never through a global. The gradient functions
that need the bookkeeping say so at registration (`@gradient("Merge", needs_call=True)`)
and receive it as `call=`; all other gradient functions stay pure functions of (op,
output gradients).

Everything here lives as long as the user's call: what must outlive it (which loop is
the backward loop of which, what a backward loop pushed and popped) is recorded on the
graph objects it describes (`WhileContext.grad_state`, `BackwardLoop`). Two threads
building gradients at once, each in its own graph, share nothing.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

# The types of the bookkeeping live in ops/control_flow (WhileContext, LoopNode,
# BackwardLoop), which imports this module: annotated here by name only, not imported.
WhileContext = LoopNode = BackwardLoop = Any


class GradientCall:
    """One user tf.gradients call being built.

    Fields (all mutated only while the call is being built, by the thread building it):
      source: the TensorArray gradient source, the name scope of the user's call (TF's
        _GetGradSource); the walks of loop bodies keep it, whatever their own scopes.
      pushed_grads: forward loop -> (gradients of values it pushed, computed by the
        backward loops that popped them: (value, push op, handle stack or None); the
        iteration counts of those backward loops, which the loop's own backward loop
        must wait for). Filled when a popping loop is differentiated, consumed when the
        pushing loop is (second-order gradients, control_flow_grad._while_grad).
      loop_nodes: while loop -> its LoopNode (a whole loop as one node of the walk).
      backward_loop: the backward loop whose body is being differentiated now (None in
        the user's own walk); its forward loop is the frame the walk sees op by op.
    """

    __slots__ = ("source", "pushed_grads", "loop_nodes", "backward_loop")

    def __init__(self, source: str):
        self.source = source
        self.pushed_grads: Dict[WhileContext, Tuple[List[tuple], list]] = {}
        self.loop_nodes: Dict[WhileContext, LoopNode] = {}
        self.backward_loop: Optional[BackwardLoop] = None

    def __repr__(self):
        return "<GradientCall %s>" % self.source

    @property
    def frame(self) -> Optional[WhileContext]:
        """The loop whose body is being differentiated now (None: the user's walk)."""
        bw = self.backward_loop
        return None if bw is None else bw.forward
