"""Run-time values that are not arrays: the dead token of control flow.

Kernels of the control-flow primitives (ops/control_flow) produce and test these, and
every executor passes them along, so they live here, below both.
"""
from __future__ import annotations

import numpy as np


class _Dead:
    """The dead token: the value of a tensor on the side of a Switch not taken
    (EuroSys 2018 §4.3)."""

    __slots__ = ()

    def __repr__(self):
        return "DEAD"

    def __bool__(self):
        raise TypeError("a dead value has no truth value")


DEAD = _Dead()

_MERGE_INDEX = tuple(np.int32(i) for i in range(8))


def merge_index(i: int):
    """The value_index output of a Merge that forwarded input `i` (an int32 scalar)."""
    return _MERGE_INDEX[i] if i < len(_MERGE_INDEX) else np.int32(i)
