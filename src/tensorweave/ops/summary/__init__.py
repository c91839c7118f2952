"""Summary ops: kernels that serialize Summary protocol buffers.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.summary import summary_ops, media_ops  # noqa: F401
