"""Indexing ops: slicing (and Tensor.__getitem__), gathers and scatters, selections.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.indexing import (  # noqa: F401
    indexing_ops, indexing_gather, indexing_select, tensor_scatter_ops,
    batch_gather_ops)
