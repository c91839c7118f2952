"""Control flow (EuroSys 2018): Identity/NoOp/group/tuple, the primitives, cond and
while_loop, their gradients, and map_fn/scan/foldl/foldr.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.control_flow import (  # noqa: F401
    structure, control_flow_ops, control_flow_grad, functional_ops)
