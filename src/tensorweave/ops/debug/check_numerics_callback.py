"""`tf.debugging.enable_check_numerics` / `disable_check_numerics` in graph mode.

While enabled on a thread, every op its op builders create (framework/op_callbacks.py)
gets a CheckNumericsV2 on each floating-point output, as TF 2.x's check-numerics
callback does in TF1 graphs: the op's float outputs are checked whenever they are
computed, and a NaN or an infinity fails the step with InvalidArgumentError naming the
op's type, the output, its dtype and static shape, the op's inputs and the line that
created it. What TF leaves out is left out: control-flow primitives and Identity,
the ops TF calls safe (reshapes, slices, concatenations, ...), and the statistics
outputs of FusedBatchNorm. Graphs built before the call are not changed.

TF's op builders return the checked tensor in place of the op's output; here the
builders keep returning the output and the graph keeps a map output -> check: every op
created afterwards takes the check as input instead (graph.py), and Session.run fetches
the check in place of the output (session.py), which amounts to the same graph and the
same errors. A Placeholder is checked as TF does it: the ops built on it while the
callback is enabled wait for its check (a control input), so a fed NaN fails.
"""
from __future__ import annotations

import contextlib
import linecache
import logging
import threading
import weakref
from typing import Dict, Optional

from tensorweave.framework import op_callbacks
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op

_log = logging.getLogger("tensorflow")

# Outputs that are NaN by design (the batch statistics of an empty batch)
IGNORE_OP_OUTPUTS = frozenset(
    [("FusedBatchNorm", i) for i in range(1, 5)] +
    [("FusedBatchNormV2", i) for i in range(1, 5)] +
    [("FusedBatchNormV3", i) for i in range(1, 6)])

# Ops TF's op callbacks skip (control flow, Identity, ...) and ops TF calls safe
SKIPPED_OPS = frozenset((
    "Enter", "Exit", "Identity", "If", "LoopCond", "Merge", "NextIteration",
    "StatelessIf", "StatefulPartitionedCall", "Switch", "While", "RemoteCall",
    "DestroyResourceOp", "RefEnter", "RefExit", "RefMerge", "RefSwitch",
    "RefNextIteration", "CheckNumericsV2",
    # TF's SAFE_OPS
    "Concat", "ConcatV2", "ExpandDims", "Fill", "Gather", "Maximum", "Minimum", "Reshape",
    "Slice", "Squeeze", "Stack", "StridedSlice", "StridedSliceGrad", "TensorListConcatV2",
    "TensorListGather", "TensorListGetItem", "TensorListPopBack", "TensorListStack",
    "Transpose", "Unpack"))


class _ThreadState(threading.local):
    def __init__(self):
        self.callback: Optional["_CheckNumericsCallback"] = None


_STATE = _ThreadState()

# graph -> {Placeholder output: its CheckNumericsV2 op}
_PLACEHOLDER_CHECKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _limit_string_length(string: str, max_len: Optional[int] = 50) -> str:
    if max_len is None or len(string) <= max_len:
        return string
    return "..." + string[len(string) - max_len:]


def _original_of(graph, tensor: Tensor) -> Tensor:
    """The output a check stands for (the message names it rather than the check)."""
    if tensor.op.type == "CheckNumericsV2" and graph._checked_outputs:
        source = tensor.op.inputs[0]
        if graph._checked_outputs.get(source) is tensor:
            return source
    return tensor


def error_message(op: Operation, slot: int, stack_height_limit: Optional[int],
                  path_length_limit: Optional[int]) -> str:
    """The message of the check of output `slot` of `op` (TF's
    get_check_numerics_error_message for graph ops)."""
    tensor = op.outputs[slot]
    graph = op.graph
    lines = ["", "", "!!! Detected Infinity or NaN in output %d of graph op \"%s\" "
             "(# of outputs: %d) !!!" % (slot, op.type, len(op.outputs)),
             "  dtype: %s" % (tensor.dtype,), "  shape: %s" % (tensor.shape,)]
    inputs = [_original_of(graph, t) for t in op.inputs]
    if len(inputs) > 1:
        lines += ["", "  Input tensors (%d):" % len(inputs)]
        lines += ["         %d: %s" % (i, t) for i, t in enumerate(inputs)]
    elif len(inputs) == 1:
        lines += ["", "  Input tensor: %s" % (inputs[0],)]
    location = op.traceback_location
    if location is not None:
        frames = [location][-stack_height_limit:] if stack_height_limit else [location]
        lines += ["", "  Stack trace of op's creation (\"->\": inferred user code):"]
        for filename, lineno in frames:
            lines.append("    + %s (L%d)" % (_limit_string_length(filename,
                                                                  path_length_limit),
                                             lineno))
            lines.append(" -> |   %s" % linecache.getline(filename, lineno).strip())
    return "\n".join(lines) + "\n\n"


class _CheckNumericsCallback:
    """The op callback of one thread (what enable_check_numerics registers)."""

    def __init__(self, stack_height_limit: Optional[int], path_length_limit: Optional[int]):
        self.stack_height_limit = stack_height_limit
        self.path_length_limit = path_length_limit

    def __call__(self, op: Operation) -> None:
        if op.type in SKIPPED_OPS:
            return
        graph = op.graph
        placeholders: Dict[Tensor, Operation] = _PLACEHOLDER_CHECKS.setdefault(graph, {})
        if op.outputs and placeholders:
            for t in op.inputs:
                check = placeholders.get(t)
                if check is not None:
                    op._add_control_input(check)
        for slot, output in enumerate(op.outputs):
            if not output.dtype.is_floating or (op.type, slot) in IGNORE_OP_OUTPUTS:
                continue
            message = error_message(op, slot, self.stack_height_limit,
                                    self.path_length_limit)
            # named in the op's scope, as TF's (a Const's check in the scope it is in)
            scope = contextlib.nullcontext() if op.type == "Const" else \
                graph.name_scope(op.name + "/")
            with scope:
                checked = apply_op("CheckNumericsV2", [output], {"message": message},
                                   name="CheckNumericsV2").outputs[0]
            if op.type == "Placeholder":
                placeholders[output] = checked.op
            else:
                if graph._checked_outputs is None:
                    graph._checked_outputs = {}
                graph._checked_outputs[output] = checked


@tf_export("debugging.enable_check_numerics")
def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Enables tensor numerics checking for the ops built on this thread from now on.

    Every floating-point output of an op built afterwards is checked whenever it is
    computed: an Infinity or NaN makes Session.run raise InvalidArgumentError, naming
    the type of the op that produced it, which of its outputs, its dtype, its static
    shape, its input tensors and the line of the program that created the op. Graphs
    built before the call are not instrumented. Calling it again has no further
    effect; it applies to the calling thread only.

    Args:
      stack_height_limit: the largest number of stack frames in the message.
      path_length_limit: the longest file path in the message (longer ones are cut
        at the front).
    """
    if _STATE.callback is None:
        _STATE.callback = _CheckNumericsCallback(stack_height_limit, path_length_limit)
    op_callbacks.add_op_callback(_STATE.callback)
    _log.info("Enabled check-numerics callback in thread %s",
              threading.current_thread().name)


@tf_export("debugging.disable_check_numerics")
def disable_check_numerics() -> None:
    """Disables the numerics checking `enable_check_numerics` enabled on this thread.

    Ops built afterwards are not checked; the checks already in graphs stay. Calling it
    again, or without enabling first, does nothing.
    """
    if _STATE.callback is None:
        return
    try:
        op_callbacks.remove_op_callback(_STATE.callback)
    except KeyError:
        pass
    _STATE.callback = None
    _log.info("Disabled check-numerics callback in thread %s",
              threading.current_thread().name)
