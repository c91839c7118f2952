"""Partial element shapes as plain tuples, shared by TensorArrays (tensor_array_ops.py)
and TensorLists (tensor_list.py).

Kernels compare element shapes per element written, so a partial shape travels as a
tuple of ints and Nones (None for an unknown dimension), or None for an unknown rank,
rather than as a TensorShape. `dims_str` prints one as TF's
PartialTensorShape::DebugString does, so error messages match TF's.
"""
from __future__ import annotations

from typing import Optional, Tuple

__all__ = ["Dims", "dims_str", "compatible", "fully_defined"]

Dims = Optional[Tuple[Optional[int], ...]]  # a partial shape; None: unknown rank


def dims_str(dims: Dims) -> str:
    """`dims` as TF prints a partial shape: "[2,?,3]", or "<unknown>" for an unknown rank.
    """
    if dims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def compatible(dims: Dims, shape: tuple) -> bool:
    """Whether the concrete `shape` has the partial shape `dims`."""
    if dims is None or dims == shape:  # the common cases, without the loop below
        return True
    return len(dims) == len(shape) and all(d is None or d == s for d, s in zip(dims, shape))


def fully_defined(dims: Dims) -> bool:
    """Whether `dims` has a known rank and every dimension known."""
    return dims is not None and all(d is not None for d in dims)
