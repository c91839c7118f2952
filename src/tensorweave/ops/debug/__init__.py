"""Print, check_numerics, the assert_* family and assert_shapes.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.debug import (  # noqa: F401
    debug_ops, check_ops, numerics, shape_asserts, check_numerics_callback)
