"""Ops on SparseTensors.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.sparse import (  # noqa: F401
    sparse_ops)
