"""Ops on SparseTensors, and set operations (which return them).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.sparse import (  # noqa: F401
    sparse_ops, sparse_math_ops, sparse_reshape_ops, sparse_select_ops, sparse_segment_ops,
    sparse_serialize_ops, sparse_compare_ops, set_ops, sparse_cross_ops)
