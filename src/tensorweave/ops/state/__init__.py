"""State: resource variables, tf.Variable, initializers, get_variable/variable_scope
and the assign helpers.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.state import (  # noqa: F401
    resource_variable_ops, variables, init_ops, variable_scope, state_ops,
    template, sliced_assign)
