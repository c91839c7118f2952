"""Control flow (EuroSys 2018): Identity/NoOp/group/tuple, the primitives, cond, case and
while_loop, their gradients, map_fn/scan/foldl/foldr, vectorized_map (pfor), and Python
functions as ops (py_func).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.control_flow import (  # noqa: F401
    structure, control_flow_ops, case_ops, cond_grad, control_flow_grad, functional_ops,
    script_ops, pfor)
