"""The build-time check of side effects that a cond does not control.

TF1's most reported cond surprise: an op with a side effect (an assign, an enqueue or
dequeue, a Print, an Assert) created *outside* the branch functions and used inside only
one branch runs whatever the predicate is, because everything a branch uses from outside
is computed before the cond's Switch. `tf.cond` calls `check` after building its
branches; it warns (a `CondSideEffectWarning` at the cond's user line, naming where the
op was created and where the branch uses it), raises a ValueError, or does nothing,
depending on the mode:

* the environment variable ``TW_COND_SIDE_EFFECTS`` = ``warn`` (the default), ``error``
  or ``ignore``;
* `set_mode(...)` (``tensorweave.debug.set_cond_side_effects``), which overrides the
  environment until `set_mode(None)`.

What counts as "used": a tensor from outside read in the branch, or an outside op the
branch has a control dependency on; a side effect is found on that op, or behind it
through its control dependencies and through pass-through ops (Identity, variable
reads, loop Enters): `tf.assign(v, 1)` returns a read of `v` that depends on the assign.
Not reported: variable reads and other ops without side effects, ops used by both
branches, ops the predicate itself needs (they must run first anyway), and values fed
through a placeholder. A side effect further up the graph, behind arithmetic on its
output (`tf.Print(x, [x]) * 2`), is not searched for: that would walk the whole model
for every cond.
"""
from __future__ import annotations

import contextlib
import os
import threading
import warnings
from typing import Dict, List, Optional

_MODES = ("warn", "error", "ignore")
_mode_override: Optional[str] = None

# stateful ops that read, create or draw random numbers: no side effect a branch controls
_NO_SIDE_EFFECT = frozenset((
    "ReadVariableOp", "_ReadVariableOrDefault", "VarHandleOp", "VarIsInitializedOp",
    "VariableShape", "ResourceGather", "QueueSizeV2", "QueueIsClosedV2",
    "TensorArraySizeV3", "TensorArrayReadV3", "TensorArrayGatherV3",
    "TensorArrayConcatV3", "TensorArrayV3", "TensorArrayGradV3", "StackV2",
    "GuaranteeConst", "Timestamp", "ControlTrigger", "_Recv", "_Send",
    "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",
    "ReaderSerializeStateV2", "GetSessionTensor", "Multinomial", "TruncatedNormal",
    "RandomShuffle", "SampleDistortedBoundingBoxV2", "SampleDistortedBoundingBox",
    # writes of a TensorArray are seen only through its flow value, which whatever reads
    # the array needs first (a branch reading an unstacked input: tf.nn.raw_rnn's
    # documented loop_fn)
    "TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3"))
# ops whose value is (or reads) their first input: the walk looks through them
_PASS_THROUGH = frozenset(("Identity", "RefIdentity", "ReadVariableOp", "Snapshot",
                           "_ReadVariableOrDefault", "Enter", "RefEnter", "IdentityN"))


class CondSideEffectWarning(UserWarning):
    """An op with a side effect, created outside a cond's branch functions, is used in
    only one branch: it runs whatever the predicate."""


_building = threading.local()  # .expected: a library builds conds that mean it


@contextlib.contextmanager
def expected():
    """Turns the check off, in this thread, while library code builds conds whose
    branches knowingly use values computed before them (as TF's own builders do:
    KMeans reads its batch whichever way its initialization goes). The warning is for
    a user's conds; the user cannot change a library's."""
    previous = getattr(_building, "expected", False)
    _building.expected = True
    try:
        yield
    finally:
        _building.expected = previous


def set_mode(mode: Optional[str]) -> None:
    """Sets what the check does: "warn", "error" (ValueError) or "ignore"; None goes
    back to the environment variable TW_COND_SIDE_EFFECTS (default "warn")."""
    global _mode_override
    if mode is not None and mode not in _MODES:
        raise ValueError("The cond side-effect mode must be one of %s or None, got %r"
                         % (", ".join(_MODES), mode))
    _mode_override = mode


def mode() -> str:
    """The mode in force (see `set_mode`)."""
    if _mode_override is not None:
        return _mode_override
    m = os.environ.get("TW_COND_SIDE_EFFECTS", "warn").strip().lower() or "warn"
    if m not in _MODES:
        raise ValueError("TW_COND_SIDE_EFFECTS must be one of %s, got %r"
                         % (", ".join(_MODES), m))
    return m


def has_side_effect(op) -> bool:
    """Whether running `op` changes state or the outside world (an assign, a queue
    operation, a Print, an Assert...): its op def is stateful, and it is not a read, a
    resource creation or a random draw."""
    d = op._op_def
    if d is None or not d.stateful or op._type in _NO_SIDE_EFFECT:
        return False
    if op._type.startswith(("Random", "Parameterized")) or \
            op._type.endswith("CandidateSampler"):
        return False
    return bool(op._inputs)  # a stateful op without inputs creates a resource


def _side_effects_behind(op, found: Dict[object, None], seen: set) -> None:
    """Adds to `found` the side-effecting ops that run whenever `op` runs, through
    control dependencies and pass-through ops (see the module docstring)."""
    stack = [op]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if has_side_effect(o):
            found.setdefault(o, None)
        stack.extend(o._control_inputs)
        if o._type in _PASS_THROUGH:
            stack.extend(t._op for t in o._inputs)


def _location(op) -> str:
    loc = op.traceback_location
    return "%s:%d" % loc if loc else "<unknown>"


def _uses(ctx, branch_ops, outputs) -> Dict[object, object]:
    """{outside op: the branch op that uses it} for one branch context; an outside value
    the branch returns is used by its Switch."""
    switched = {v: k for k, v in ctx._values.items() if k is not v}
    uses: Dict[object, object] = {}
    for t in outputs:
        outside = switched.get(t)
        if outside is not None:
            uses.setdefault(outside._op, t._op)
    for op in branch_ops:
        if not ctx.contains(op):
            continue
        for t in op._inputs:
            outside = switched.get(t)
            if outside is not None:
                uses.setdefault(outside._op, op)
        for c in op._control_inputs:
            if not ctx.contains(c) and c is not ctx.pivot._op:
                uses.setdefault(c, op)
    return uses


def check(cond_name: str, pred, branches) -> None:
    """Warns about (or rejects) side effects used in only one branch of the cond
    `cond_name`. `branches` is [(CondContext, ops created while building it, the
    branch's output tensors)]; `pred` the predicate tensor."""
    m = mode()
    if m == "ignore" or getattr(_building, "expected", False):
        return
    per_branch = []
    for ctx, ops, outputs in branches:
        effects: Dict[object, object] = {}  # side-effect op -> the branch op using it
        for outside, user in _uses(ctx, ops, outputs).items():
            found: Dict[object, None] = {}
            _side_effects_behind(outside, found, set())
            for op in found:
                effects.setdefault(op, user)
        per_branch.append((ctx, effects))
    if not any(effects for _, effects in per_branch):
        return
    from tensorweave.framework.graph import upstream_ops
    needed_by_pred = upstream_ops([pred._op])
    problems: List[str] = []
    for i, (ctx, effects) in enumerate(per_branch):
        others = [e for j, (_, e) in enumerate(per_branch) if j != i]
        for op, user in effects.items():
            if op in needed_by_pred or any(op in e for e in others):
                continue
            problems.append(
                "tf.cond \"%s\": the op '%s' (%s, created at %s) is used only in the %s "
                "branch (by '%s' at %s), but it runs whatever the predicate is: what a "
                "branch uses from outside is computed before the cond. Create it inside "
                "the branch function to make it conditional. (TW_COND_SIDE_EFFECTS=error "
                "makes this an error, =ignore silences it.)" % (
                    cond_name, op.name, op.type, _location(op),
                    "true" if ctx.branch else "false", user.name, _location(user)))
    if not problems:
        return
    if m == "error":
        raise ValueError("\n".join(problems))
    loc = pred._op.traceback_location  # the predicate's ops: the user's cond line
    for text in problems:
        if loc:
            warnings.warn_explicit(text, CondSideEffectWarning, loc[0], loc[1])
        else:
            warnings.warn(text, CondSideEffectWarning, stacklevel=3)
