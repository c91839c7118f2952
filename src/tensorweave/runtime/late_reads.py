"""Fetches of TF1 reference variables: the variable's value at the end of the run.

In TF1 a variable is a buffer its reads alias (VariableV2's ref output, "v/read" an
Identity that forwards it), and a run's fetched tensors are copied out when the run is
over. So `sess.run([train_op, global_step])` gives the step after train_op's increment,
and a fetched variable shows every update of the run, whatever the order its read ran
in. tensorweave's reads copy the value when they run; for a fetched read of a variable
made as a TF1 reference variable (its handle carries REF_VARIABLE_ATTR) that the same
run also updates, or that another thread may update while the run waits (it has a
kernel that waits: a queue's dequeue, an accumulator's take; SyncReplicasOptimizer's
workers fetch the global step the chief advances so), the session fetches the
variable's handle as well and reads the value once the run is over (`LateReadPlan`). A fetch of such a variable's handle itself ("v:0"
of an imported graph where no plain read stands for it, as after a rewrite whose reads
all wait on control inputs) reads the value after the run too, whether or not the run
writes it. Reads of resource variables (`use_resource=True`) keep TF's resource
semantics: the value when the read ran.

Found when a plan is built (`late_reads`), so a run pays nothing unless a fetched
reference variable is also written by that run, or the run may wait. Local sessions only: a distributed
master's plans read variables where they live.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework.graph import Tensor, upstream_ops
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR

# ops that read a variable's handle without changing the variable
_READS = frozenset(("ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VariableShape",
                    "VarIsInitializedOp"))


def _ref_read_handle(t: Tensor) -> Optional[Tensor]:
    """The handle of the TF1 reference variable `t` is a plain read of (through
    identities, which forward the buffer in TF1) or is itself, else None."""
    op = t._op
    if op._type == "VarHandleOp":
        return t if op._attrs.get(REF_VARIABLE_ATTR) else None
    while op._type == "Identity" and op._inputs:
        op = op._inputs[0]._op
    if op._type != "ReadVariableOp":
        return None
    handle = op._inputs[0]
    if handle._op._type != "VarHandleOp" or not handle._op._attrs.get(REF_VARIABLE_ATTR):
        return None
    return handle


def late_reads(fetches: Tuple[Tensor, ...], targets, feeds) -> List[Tuple[int, Tensor]]:
    """(fetch index, variable handle) of each fetch that must read its variable after
    the run: a read of a TF1 reference variable that an op of the same run writes, or
    any such read when the run has a kernel that waits (other threads' updates land
    meanwhile), or the variable's handle itself (its value is what the fetch gives)."""
    candidates = [(i, h) for i, h in ((i, _ref_read_handle(t)) for i, t in
                                      enumerate(fetches)) if h is not None]
    if not candidates or all(fetches[i] is h for i, h in candidates):
        return candidates
    from tensorweave.ops.state.resource_variable_ops import FORWARDING_OPS, handle_source
    written = set()
    for op in upstream_ops([t._op for t in fetches] + list(targets), set(feeds)):
        if _waits(op._type):
            return candidates
        if op._type in _READS or op._type in FORWARDING_OPS:  # a forwarded handle: its
            continue                                       # users write, or not
        for t in op._inputs:
            if t._dtype.name == "resource":
                written.add(handle_source(t)._op)
    return [(i, h) for i, h in candidates if h._op in written or fetches[i] is h]


def _waits(op_type: str) -> bool:
    """Whether `op_type`'s kernel may wait for another step (an asynchronous kernel:
    queue and barrier ops, accumulator takes, transfers)."""
    from tensorweave.framework import errors, registry
    try:
        return registry.get_kernel(op_type).is_async
    except errors.NotFoundError:  # no CPU kernel (an accelerator's op): not known to wait
        return False


class LateReadPlan:
    """A plan that also fetches the handles of late reads (after the fetches) and gives
    the fetches with those reads resolved; everything else is the wrapped plan's."""

    def __init__(self, plan, n_fetches: int, late: List[int]):
        self._plan, self._n, self._late = plan, n_fetches, late
        # what the session does with fetches by index concerns the user's fetches only
        self.fetches_to_host = tuple(e for e in plan.fetches_to_host if e[0] < n_fetches)
        self.dead_fetch = tuple(k for k in plan.dead_fetch if k < n_fetches)

    def __getattr__(self, name):
        return getattr(self._plan, name)

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
