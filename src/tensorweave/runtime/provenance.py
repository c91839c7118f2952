"""Where a run-time error happened (white paper §9, EuroSys 2018 §4.3 for frames).

A kernel error is raised with the failing op's name, the user line that created it
(errors.with_op), and the control flow around the op, innermost first:

    Input to reshape is a tensor with 6 values, but the requested shape has 4
    	 [[node rnn/while/Reshape (defined at /home/me/model.py:42) ]]
    	 in the true branch of cond "rnn/while/cond"
    	 in while/body at iteration 17 of loop "rnn/while"

A cond branch comes from the op's control-flow context (static). A loop's iteration is
known only to the executor, at the moment the kernel fails: the executors pass the
(frame name, iteration) of each enclosing loop, innermost first, to
`executor.kernel_error`, and the structured executor, whose nested loops unwind one
level at a time, adds each outer level with `add_loop_level`. Nothing is computed or
recorded for ops that do not fail.

`while/cond` names the ops of a loop's predicate (built by its `cond` function),
`while/body` the ops built by its `body` function. A loop frame the graph has no
context for (an imported GraphDef) is named by its frame name alone.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from tensorweave.framework import errors

Iterations = Sequence[Tuple[str, int]]  # (frame name, iteration), innermost loop first


def context_lines(op, iterations: Iterations = ()) -> List[str]:
    """The control-flow lines of `op`'s error text (see the module docstring)."""
    its = list(iterations)
    lines = []
    ctx = getattr(op, "_control_flow_context", None)
    if ctx is not None and op.type in ("Enter", "RefEnter"):
        ctx = ctx.outer  # an Enter runs in the frame around its loop
    while ctx is not None:
        branch = getattr(ctx, "branch", None)
        if branch is not None:  # a CondContext
            lines.append('in the %s branch of cond "%s"'
                         % ("true" if branch else "false", ctx.name.rpartition("/")[0]))
        else:  # a WhileContext
            n = _take_iteration(its, ctx.name)
            lines.append('in while/%s%s of loop "%s"' % (
                "cond" if _in_cond_part(ctx, op) else "body",
                "" if n is None else " at iteration %d" % n, ctx.name))
        ctx = ctx.outer
    for name, n in its:  # frames without a context in the graph
        lines.append('in loop frame "%s" at iteration %d' % (name, n))
    return lines


def _take_iteration(its: list, frame_name: str) -> Optional[int]:
    for i, (name, n) in enumerate(its):
        if name == frame_name:
            del its[i]
            return n
    return None


def _in_cond_part(ctx, op) -> bool:
    """Whether `op` was built by the loop's `cond` function (while_loop records the
    range of graph ids its cond call created)."""
    ids = getattr(ctx, "cond_ids", None)
    return ids is not None and ids[0] < op._id <= ids[1]


def with_context(err: errors.OpError, op, iterations: Iterations = ()) -> errors.OpError:
    """`err` (which names `op`, errors.with_op) with `op`'s control-flow lines appended;
    `err` itself when there are none. The result remembers its base message and
    iterations, so that `add_loop_level` can extend them."""
    if op is None or (getattr(op, "_control_flow_context", None) is None and not iterations):
        return err
    base = getattr(err, "_tw_base", err.message)
    lines = context_lines(op, iterations)
    if not lines:
        return err
    new = type(err)(None, op, base + "".join("\n\t " + ln for ln in lines))
    new._tw_base = base
    new._tw_iterations = tuple(iterations)
    return new


def add_loop_level(err: BaseException, frame_name: str, iteration: int) -> BaseException:
    """`err`, raised inside a loop nested in frame `frame_name`, with that frame's
    iteration added (the structured executor unwinding a nested loop)."""
    if not isinstance(err, errors.OpError) or err.op is None:
        return err
    its = getattr(err, "_tw_iterations", ())
    return with_context(err, err.op, tuple(its) + ((frame_name, iteration),))
