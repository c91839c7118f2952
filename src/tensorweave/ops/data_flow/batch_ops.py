"""Batching the calls of a function that concurrent steps make:
`tf.nondifferentiable_batch_function` and its op, BatchFunction.

The decorator traces the function once per call site, into ops of the caller's graph
that read placeholders of its arguments (with any first dimension), as tf.data traces
its functions (data/dataset_ops.py); the ops run only through the BatchFunction op,
whose inputs are the arguments and the tensors the function reads from outside (its
captured tensors, evaluated in the calling step as TF's). The op's kernel is
asynchronous: it hands the step's arguments to the op's batcher (batch_scheduler.py, a
resource of the session's device named by `shared_name`) and completes when the batch
holding them has been computed: one nested run of the session computes the function
for every step in the batch, and each step gets its own rows of the outputs.

TF registers no gradient for BatchFunction: tf.gradients through it raises LookupError.
"""
from __future__ import annotations

import functools
from typing import Callable, List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, nest
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.data_flow.batch_scheduler import Batcher, BatchOptions, Task
from tensorweave.ops.math.quantize_ops import no_gradient

register_op("BatchFunction", inputs=["in_tensors: Tin", "captured_tensors: Tcaptured"],
            outputs=["out_tensors: Tout"],
            attrs={"f": "", "num_batch_threads": 0, "max_batch_size": 0,
                   "batch_timeout_micros": 0, "max_enqueued_batches": 10,
                   "allowed_batch_sizes": [], "container": "", "shared_name": "",
                   "batching_queue": "", "enable_large_batch_splitting": False,
                   "Tin": TypeListAttr(), "Tcaptured": TypeListAttr(),
                   "Tout": TypeListAttr()},
            shape=lambda op: [unknown_shape() for _ in op.outputs], stateful=True)
gradient("BatchFunction")(no_gradient)

# the graph attribute holding the functions traced for BatchFunction ops, by `f` attr
_COMPUTATIONS = "_tw_batch_functions"


# --- the traced function --------------------------------------------------------------------
class _Computation:
    """A function traced into ops of the current graph: `inputs` are placeholders of its
    arguments, `outputs` its flat results, `structure` their nesting, `captures` the
    tensors from outside that its ops read (not resources or variants: state such as a
    variable is read when a batch runs)."""

    def __init__(self, fn: Callable, args: Sequence):
        g = _graph.get_default_graph()
        first_op = len(g._ops)
        with g.control_dependencies(None), _graph.name_scope("computation"):
            self.inputs = [_argument_placeholder(a, "batch_%d" % k)
                           for k, a in enumerate(args)]
            self.structure = fn(*self.inputs)
            self.outputs = [convert_to_tensor(t) for t in nest.flatten(self.structure)]
        traced = g._ops[first_op:]
        inside = set(traced)
        self.captures = list(dict.fromkeys(
            t for op in traced for t in op.inputs if t.op not in inside and
            t.dtype.base_dtype not in (_dt.resource, _dt.variant)))
        self.graph = g

    def compute(self, session, captured: Sequence) -> Callable[[list], list]:
        """The batched function for one step: inputs -> outputs, a run of `session`
        with the step's `captured` values."""
        def run(inputs: list) -> list:
            feed = dict(zip(self.captures, captured))
            feed.update(zip(self.inputs, inputs))
            return [np.asarray(v) for v in session.run(self.outputs, feed_dict=feed)]
        return run


def _argument_placeholder(arg, name: str):
    from tensorweave.ops.array.constant_op import placeholder
    shape = arg.shape
    if shape.ndims:  # any number of rows: a batch holds those of several steps
        shape = TensorShape([None] + shape.as_list()[1:])
    return placeholder(arg.dtype, shape, name=name)


def _register(computation: _Computation, name: str) -> str:
    table = computation.graph.__dict__.setdefault(_COMPUTATIONS, {})
    key = "%s_%d" % (name, len(table))
    table[key] = computation
    return key


def _computation_of(ctx) -> _Computation:
    computation = ctx.op.graph.__dict__.get(_COMPUTATIONS, {}).get(ctx.attrs["f"])
    if computation is None:
        raise errors.UnimplementedError(
            None, ctx.op, "BatchFunction runs functions traced by "
            "tf.nondifferentiable_batch_function into this graph; the function %r of an "
            "imported GraphDef is not supported" % ctx.attrs["f"])
    return computation


# --- the kernel -----------------------------------------------------------------------------
def _options(ctx) -> BatchOptions:
    """The op's attrs as BatchOptions, checked as TF's kernel does (once per op)."""
    options = ctx.state.get("options")
    if options is None:
        options = ctx.state["options"] = _checked_options(ctx, ctx.attrs)
    return options


def _checked_options(ctx, a: dict) -> BatchOptions:
    allowed = tuple(int(s) for s in a["allowed_batch_sizes"])
    max_size, split = int(a["max_batch_size"]), bool(a["enable_large_batch_splitting"])
    problems = [
        (max_size <= 0, "input_batch_size_limit must be positive; was %d" % max_size),
        (a["batch_timeout_micros"] < 0, "batch_timeout_micros must be non-negative; was %d"
         % a["batch_timeout_micros"]),
        (a["max_enqueued_batches"] <= 0, "max_enqueued_batches must be positive; was %d"
         % a["max_enqueued_batches"]),
        (any(b <= s for s, b in zip(allowed, allowed[1:])),
         "allowed_batch_sizes entries must be monotonically increasing"),
        (bool(allowed) and not split and allowed[-1] != max_size,
         "final entry in allowed_batch_sizes must equal max_batch_size when "
         "enable_large_batch_splitting is False"),
        (bool(allowed) and split and allowed[-1] > max_size,
         "When enable_large_batch_splitting is true, input_batch_size_limit must be "
         "greater than or equal to max_execution_batch_size."),
    ]
    for failed, message in problems:
        if failed:
            raise errors.InvalidArgumentError(None, ctx.op, message)
    return BatchOptions(
        num_threads=int(a["num_batch_threads"]), max_batch_size=max_size,
        max_execution_batch_size=allowed[-1] if allowed and split else max_size,
        allowed_batch_sizes=allowed, timeout_s=a["batch_timeout_micros"] / 1e6,
        max_enqueued_batches=int(a["max_enqueued_batches"]), split=split)


def _check_inputs(ctx, inputs: Sequence[np.ndarray], options: BatchOptions) -> int:
    """The task's size (the inputs' common first dimension)."""
    if any(np.ndim(x) == 0 for x in inputs):
        raise errors.InvalidArgumentError(None, ctx.op, "Batching input tensors must have "
                                          "at least one dimension")
    sizes = {x.shape[0] for x in inputs}
    if len(sizes) > 1:
        shapes = "".join("\n - %s has shape %s" % (t.name, list(x.shape))
                         for t, x in zip(ctx.op.inputs, inputs))
        raise errors.InvalidArgumentError(
            None, ctx.op, "Batching input tensors supplied in a given op invocation must "
            "have equal 0th-dimension size.\nBelow are the input tensors: %s" % shapes)
    size = sizes.pop()
    if size > options.max_batch_size:
        raise errors.InvalidArgumentError(None, ctx.op, "Task size %d is larger than "
                                          "maximum input batch size %d"
                                          % (size, options.max_batch_size))
    return size


@kernel("BatchFunction", is_async=True)
def _batch_function_kernel(ctx, state, done, *args):
    n_in = len(ctx.attrs["Tin"])
    inputs, captured = args[:n_in], args[n_in:]
    options = _options(ctx)
    single = len(ctx.attrs["Tout"]) == 1
    if _check_inputs(ctx, inputs, options) == 0:
        # TF answers an empty call at once, with empty vectors
        empty = [np.zeros([0], _dt.as_dtype(t).as_numpy_dtype) for t in ctx.attrs["Tout"]]
        done(result=empty[0] if single else empty)
        return
    computation = _computation_of(ctx)
    name = ctx.attrs["shared_name"] or ctx.op.name
    batcher = ctx.resources.lookup_or_create(ctx.attrs["container"], name,
                                             lambda: Batcher(options, ctx.op))
    token = []

    def finish(result=None, exc=None):
        state.remove_cancel_callback(token[0])
        done(result=result[0] if single and exc is None else result, exc=exc)
    task = Task(inputs, computation.compute(ctx.session, captured), finish)
    token.append(state.add_cancel_callback(task.fail))
    try:
        batcher.submit(task)
    except errors.OpError as exc:  # a full queue: the step fails through `done`
        task.fail(exc)


# --- the decorator --------------------------------------------------------------------------
def _check_arguments(args: Sequence) -> None:
    if not args:
        raise ValueError("Attr 'Tin' of 'BatchFunction' Op passed list of length 0 less "
                         "than minimum 1.")
    for a in args:
        if not isinstance(a, _graph.Tensor):
            raise ValueError("All arguments to functions decorated with `batch_function`  "
                             "are supposed to be Tensors; found %r." % (a,))


@tf_export("nondifferentiable_batch_function")
def batch_function(num_batch_threads: int, max_batch_size: int, batch_timeout_micros: int,
                   allowed_batch_sizes: Optional[List[int]] = None,
                   max_enqueued_batches: int = 10, autograph: bool = True,
                   enable_large_batch_splitting: bool = True) -> Callable:
    """Batches the computation of the decorated function across concurrent steps.

    The decorated function takes Tensors whose first dimension is the batch. Each call
    builds one BatchFunction op: when several `Session.run` calls compute it at the same
    time, their arguments are concatenated along the first dimension and the function
    runs once on the batch; each run gets its own rows of the results.

    Args:
      num_batch_threads: how many batches may be computed at once.
      max_batch_size: the largest number of rows one call may pass, and (without
        large-batch splitting or allowed_batch_sizes) the largest batch.
      batch_timeout_micros: how long a batch that is not full waits for more calls.
      allowed_batch_sizes: increasing batch sizes a batch is padded up to (with copies
        of its first row); the last one is max_batch_size, or with large-batch
        splitting at most max_batch_size and then the largest batch.
      max_enqueued_batches: how many batches may wait to be computed.
      autograph: accepted for TF's signature; functions are traced as plain Python.
      enable_large_batch_splitting: a call that does not fit in the open batch fills it
        and goes on in the next batches.

    Returns:
      A decorator; the decorated function returns what the function returns (a Tensor or
      a nested structure of Tensors), computed in batches. Static shapes are unknown.

    Raises:
      ValueError: the decorated function is called without arguments, or with an
        argument that is not a Tensor.
    """
    del autograph  # tensorweave traces Python functions as they are
    attrs = {"num_batch_threads": num_batch_threads, "max_batch_size": max_batch_size,
             "batch_timeout_micros": batch_timeout_micros,
             "allowed_batch_sizes": list(allowed_batch_sizes or []),
             "max_enqueued_batches": max_enqueued_batches,
             "enable_large_batch_splitting": bool(enable_large_batch_splitting)}

    def decorator(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def decorated(*args):
            with _graph.name_scope("batch") as scope:
                _check_arguments(args)
                computation = _Computation(fn, args)
                op = apply_op("BatchFunction", [list(args), computation.captures],
                              dict(attrs, f=_register(computation, scope.rstrip("/")),
                                   shared_name=scope,
                                   Tout=[t.dtype for t in computation.outputs]),
                              name="BatchFunction")
            return nest.pack_sequence_as(computation.structure, list(op.outputs))
        return decorated
    return decorator
