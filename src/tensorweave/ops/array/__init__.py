"""Array ops: constants and placeholders, shapes, reshapes, fills, joins, padding.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.array import (  # noqa: F401
    constant_op, array_util, array_ops, array_fill_ops, array_join_ops, array_pad_ops,
    array_sort_ops, array_rearrange_ops, array_shape_ops,
    array_view_ops)
