"""Fetches of TF1 reference variables: the variable's value at the end of the run.

In TF1 a variable is a buffer its reads alias (VariableV2's ref output, "v/read" an
Identity that forwards it), and a run's fetched tensors are copied out when the run is
over. So `sess.run([train_op, global_step])` gives the step after train_op's increment,
and a fetched variable shows every update of the run, whatever the order its read ran
in. tensorweave's reads copy the value when they run; for a fetched read of a variable
made as a TF1 reference variable (its handle carries REF_VARIABLE_ATTR) that the same
run also updates, the session fetches the variable's handle as well and reads the value
once the run is over (`resolve`). Reads of resource variables (`use_resource=True`) keep
TF's resource semantics: the value when the read ran.

Found when a plan is built (`late_reads`), so a run pays nothing unless a fetched
reference variable is also written by that run. Local sessions only: a distributed
master's plans read variables where they live.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR

# ops that read a variable's handle without changing the variable, and ops that pass a
# handle on (a writer behind them still writes the variable)
_READS = frozenset(("ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VariableShape",
                    "VarIsInitializedOp"))
_PASS_THROUGH = frozenset(("Identity", "Enter", "Switch", "Merge", "Exit", "NextIteration"))


def _handle_op(t: Tensor):
    """The op that made the handle `t`, through ops that pass handles on."""
    op = t._op
    while op._type in _PASS_THROUGH and op._inputs:
        op = op._inputs[0]._op
    return op


def _ref_read_handle(t: Tensor) -> Optional[Tensor]:
    """The handle of the TF1 reference variable `t` is a plain read of (through
    identities, which forward the buffer in TF1), else None."""
    op = t._op
    while op._type == "Identity" and op._inputs:
        op = op._inputs[0]._op
    if op._type != "ReadVariableOp":
        return None
    handle = op._inputs[0]
    if handle._op._type != "VarHandleOp" or not handle._op._attrs.get(REF_VARIABLE_ATTR):
        return None
    return handle


def _run_ops(fetches: Iterable[Tensor], targets, feeds) -> set:
    """The ops a run of `fetches` and `targets` executes (what they depend on, up to the
    fed tensors)."""
    fed = set(feeds)
    seen = set()
    stack = [t._op for t in fetches] + list(targets)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        for t in op._inputs:
            if t not in fed:
                stack.append(t._op)
        stack.extend(op._control_inputs)
    return seen


def late_reads(fetches: Tuple[Tensor, ...], targets, feeds) -> List[Tuple[int, Tensor]]:
    """(fetch index, variable handle) of each fetch that must read its variable after
    the run: a read of a TF1 reference variable that an op of the same run writes."""
    candidates = [(i, h) for i, h in ((i, _ref_read_handle(t)) for i, t in
                                      enumerate(fetches)) if h is not None]
    if not candidates:
        return []
    written = set()
    for op in _run_ops(fetches, targets, feeds):
        if op._type in _READS or op._type in _PASS_THROUGH:
            continue
        for t in op._inputs:
            if t._dtype.name == "resource":
                written.add(_handle_op(t))
    return [(i, h) for i, h in candidates if h._op in written]


class LateReadPlan:
    """A plan that also fetches the handles of late reads (after the fetches) and gives
    the fetches with those reads resolved; everything else is the wrapped plan's."""

    def __init__(self, plan, n_fetches: int, late: List[int]):
        self._plan, self._n, self._late = plan, n_fetches, late

    def __getattr__(self, name):
        return getattr(self._plan, name)

    # what the session does with fetches by index concerns the user's fetches only
    @property
    def fetches_to_host(self) -> tuple:
        return tuple(e for e in self._plan.fetches_to_host if e[0] < self._n)

    @property
    def dead_fetch(self) -> tuple:
        return tuple(k for k in self._plan.dead_fetch if k < self._n)

    def run(self, feed_values, env, options=None, trace=None) -> list:
        return resolve(self._plan.run(feed_values, env, options, trace), self._n,
                       self._late)


def resolve(out: list, n_fetches: int, late: List[int]) -> list:
    """The run's fetched values with each late read replaced by its variable's value now:
    `out` holds the fetches, then one handle per entry of `late` (the fetch indices)."""
    from tensorweave.ops.state.resource_variable_ops import lookup_variable
    values = list(out[:n_fetches])
    for i, handle in zip(late, out[n_fetches:]):
        var = lookup_variable(handle, None)
        with var.lock:
            value = var.value
        if type(value) is not np.ndarray and hasattr(value, "get"):
            value = value.get()  # a variable in GPU memory (CuPy): its host copy
        values[i] = value
    return values
