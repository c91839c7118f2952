"""Which executor runs a step: the execution policy and the one decision made from it.

`ExecutionPolicy` holds everything outside the graph that the choice depends on (thread
count, the heavy-kernel threshold, the TW_EXECUTOR override); a session builds it once
from its ConfigProto and the environment. `choose_executor(step_graph, policy)` is the
only place that picks an executor; `kernel_weight` is the only definition of a cheap
kernel. Both are pure functions of their arguments.

Executors (what each runs, runtime/__init__.py has the full map):
  SEQUENTIAL  no control flow, nothing to wait for or to overlap: the steps in plan order
              on the calling thread (runtime/executor.run_steps).
  DATAFLOW    no control flow, but a kernel that may wait (asynchronous) or heavy kernels
              that can overlap on the thread pool (runtime/executor.run_dataflow).
  STRUCTURED  control flow of cheap synchronous kernels: each while loop compiled into one
              Python function (runtime/frames.py).
  TAGGED      control flow with kernels that wait, or heavy kernels that can overlap
              across loop iterations: tagged-token dataflow (runtime/tagged.py).
"""
from __future__ import annotations

import os
from typing import List, Optional

from tensorweave.framework import registry as _reg
from tensorweave.runtime import determinism as _determinism

SEQUENTIAL, DATAFLOW, STRUCTURED, TAGGED = "sequential", "dataflow", "structured", "tagged"
EXECUTORS = (SEQUENTIAL, DATAFLOW, STRUCTURED, TAGGED)

# A kernel's weight (kernel_weight): where it may run.
CHEAP = "cheap"      # always inline on the scheduling thread: a pool hand-off costs more
HEAVY = "heavy"      # known (static shapes) to cost at least the heavy threshold
UNSIZED = "unsized"  # registered as not cheap, cost unknown: may be heavy

# Control-flow op types: a step holding any of them runs on STRUCTURED or TAGGED.
CONTROL_FLOW_OPS = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration",
                              "LoopCond", "RefSwitch", "RefMerge", "RefEnter",
                              "RefNextIteration", "ControlTrigger"})

DEFAULT_HEAVY_FLOPS = 2e8  # about 10 ms of one BLAS core: worth a thread hand-off


class ExecutionPolicy:
    """What, besides the step graph, decides how a step runs (immutable).

    Attributes:
      inter_op_threads: threads of the session's pool (ConfigProto
        inter_op_parallelism_threads, else the CPU count); kernels overlap only if >= 2.
      heavy_flops: the static FLOP estimate from which a kernel is HEAVY.
      forced_executor: TAGGED when the environment sets TW_EXECUTOR=tagged (steps with
        control flow then always run on the tagged executor; tests use it to run both
        control-flow executors), else None.
      fuse_host_partitions: whether a step whose control flow spans CPU devices of
        this process runs as one compiled program (partitioned_plan.runs_fused) rather
        than as partitions exchanging Send/Recv; on by default, off with
        ConfigProto(experimental={'fuse_host_partitions': False}) or
        TW_FUSE_HOST_PARTITIONS=0 (tests of the partitioned machinery use it).
      deterministic: the deterministic mode (runtime/determinism.py), on with
        ConfigProto(experimental={'deterministic': True}) (or a `record_inputs`
        directory) or TF_DETERMINISTIC_OPS=1 / TW_DETERMINISTIC=1: one inter-op thread,
        every kernel CHEAP (`kernel_weight`), asynchronous kernels waited for inside
        their call (plan.KernelBinder).

    Tracing (RunOptions.trace_level) is per run and never changes the executor: every
    plan type has a traced run.
    """

    __slots__ = ("inter_op_threads", "heavy_flops", "forced_executor",
                 "fuse_host_partitions", "deterministic")

    def __init__(self, inter_op_threads: int = 1, heavy_flops: float = DEFAULT_HEAVY_FLOPS,
                 forced_executor: Optional[str] = None, fuse_host_partitions: bool = True,
                 deterministic: bool = False):
        if forced_executor not in (None, TAGGED):
            raise ValueError("forced_executor must be None or %r, got %r"
                             % (TAGGED, forced_executor))
        object.__setattr__(self, "inter_op_threads",
                           1 if deterministic else max(1, int(inter_op_threads)))
        object.__setattr__(self, "heavy_flops", float(heavy_flops))
        object.__setattr__(self, "forced_executor", forced_executor)
        object.__setattr__(self, "fuse_host_partitions", bool(fuse_host_partitions))
        object.__setattr__(self, "deterministic", bool(deterministic))

    def __setattr__(self, name, value):
        raise AttributeError("ExecutionPolicy is immutable")

    @classmethod
    def from_config(cls, config, environ=None) -> "ExecutionPolicy":
        """The policy of a session with ConfigProto `config` (None: defaults) in the
        environment `environ` (default os.environ)."""
        environ = os.environ if environ is None else environ
        threads = (config.inter_op_parallelism_threads if config else 0) or \
            (os.cpu_count() or 1)
        forced = TAGGED if environ.get("TW_EXECUTOR") == "tagged" else None
        fuse = environ.get("TW_FUSE_HOST_PARTITIONS", "1") != "0"
        deterministic = _determinism.from_environment(environ)
        if config is not None:
            fuse = fuse and bool(config.experimental.fuse_host_partitions)
            deterministic = deterministic or bool(config.experimental.deterministic) or \
                bool(config.experimental.record_inputs)
        return cls(inter_op_threads=threads, forced_executor=forced,
                   fuse_host_partitions=fuse, deterministic=deterministic)

    def __repr__(self):
        return ("ExecutionPolicy(inter_op_threads=%d, heavy_flops=%g, forced_executor=%r, "
                "deterministic=%r)" % (self.inter_op_threads, self.heavy_flops,
                                       self.forced_executor, self.deterministic))


def kernel_weight(kernel_def, cost: float, policy: ExecutionPolicy,
                  attrs: Optional[dict] = None) -> str:
    """The one definition of a cheap kernel: CHEAP, HEAVY or UNSIZED, for the kernel
    `kernel_def` of a node of static cost `cost` (`static_cost`) and attrs `attrs`.

    A kernel is CHEAP if its registration says so (`kernel(cheap=True)`, the default),
    its static cost is known and below the heavy threshold, or it spreads its own work
    over every core (`KernelDef.threaded`: oneDNN's convolutions, pools and products):
    the pool could only overlap such a kernel with others that then take its cores from
    it (on cnn_train, 30-36 ms a step against 25-27 run inline). It is HEAVY if its
    static cost is at least the threshold, UNSIZED otherwise (registered heavy, shapes
    unknown). Only HEAVY kernels justify an executor with a thread pool
    (`choose_executor`); on such an executor both HEAVY and UNSIZED kernels run on the
    pool. In the deterministic mode every kernel is CHEAP: nothing runs on the pool.
    """
    if kernel_def is None or kernel_def.cheap or policy.deterministic or \
            0.0 < cost < policy.heavy_flops or \
            (kernel_def.threaded is not None and kernel_def.threaded(attrs or {})):
        return CHEAP
    return HEAVY if cost >= policy.heavy_flops else UNSIZED


def node_weight(n, policy: ExecutionPolicy) -> str:
    """`kernel_weight` of a placed step-graph node (feeds and constants are CHEAP)."""
    if n.type in ("_Feed", "Const") or n.type in CONTROL_FLOW_OPS:
        return CHEAP
    return kernel_weight(_reg.get_kernel(n.type, n.device.device_type), static_cost(n),
                         policy, n.attrs)


def is_async_node(n) -> bool:
    if n.type in ("_Feed", "Const"):
        return False
    return _reg.get_kernel(n.type, n.device.device_type).is_async


def choose_executor(sg, policy: ExecutionPolicy) -> str:
    """The executor for the (pruned, placed, optimized) step graph `sg`. The rules:

    with control flow (any op of CONTROL_FLOW_OPS):
      1. TAGGED if the policy forces it (TW_EXECUTOR=tagged);
      2. TAGGED if a kernel is asynchronous (it must be able to wait), unless the step
         is one whose asynchronous kernel can wait in place (`waits_in_place`);
      3. TAGGED if there are >= 2 threads, a HEAVY kernel, and either a loop with
         parallel_iterations > 1 (the heavy kernels of iterations can overlap) or two
         HEAVY kernels at the same dataflow depth (independent within one iteration,
         as in rule 6; loop back edges do not count);
      4. otherwise STRUCTURED (plan.build_plan falls back to TAGGED for the few graphs
         the structured compiler does not handle, frames.NotStructured);
    without control flow:
      5. DATAFLOW if a kernel is asynchronous;
      6. DATAFLOW if there are >= 2 threads and two HEAVY kernels at the same dataflow
         depth (independent, so they can overlap on the pool);
      7. otherwise SEQUENTIAL.

    Raises:
      NotFoundError: a node has no kernel for its device.
    """
    nodes = sg.nodes
    if any(n.type in CONTROL_FLOW_OPS for n in nodes):
        if policy.forced_executor == TAGGED:
            return TAGGED
        weights = []
        waiting = []
        for n in nodes:
            if n.type in CONTROL_FLOW_OPS or n.type in ("_Feed", "Const"):
                weights.append(CHEAP)
                continue
            if is_async_node(n):
                waiting.append(n)
            weights.append(node_weight(n, policy))
        if waiting and not waits_in_place(nodes, waiting):
            return TAGGED
        if HEAVY in weights and policy.inter_op_threads >= 2 and (
                any(n.type == "Enter" and int(n.attrs.get("parallel_iterations", 10)) > 1
                    for n in nodes) or heavy_kernels_can_overlap(nodes, weights)):
            return TAGGED
        return STRUCTURED
    weights = []
    for n in nodes:
        if is_async_node(n):
            return DATAFLOW
        weights.append(node_weight(n, policy))
    if uses_thread_pool(nodes, weights, policy):
        return DATAFLOW
    return SEQUENTIAL


# Synchronous ops that can end another step's wait: a queue's close ends its dequeues,
# an accumulator's apply or global step a take of it, and a stateful py_func may do
# anything (signal a thread that then enqueues).
WAKERS = frozenset({"QueueCloseV2", "QueueClose", "AccumulatorApplyGradient",
                    "ResourceAccumulatorApplyGradient", "SparseAccumulatorApplyGradient",
                    "AccumulatorSetGlobalStep", "ResourceAccumulatorSetGlobalStep",
                    "PyFunc"})


def waits_in_place(nodes: list, waiting: list) -> bool:
    """Whether the asynchronous kernels `waiting` of a control-flow step may wait on the
    step's own thread (the structured executor then runs the step, frames.py).

    The tagged executor runs the rest of a step while one of its kernels waits; waiting
    in place holds that rest back. That cannot change the outcome when the step has one
    asynchronous kernel and nothing else of the step can end a wait of any step: a
    dequeue waits only for other steps' enqueues then (held-back work of this step
    could not have fed it, nor freed another step to feed it). A step with two of them
    (an enqueue and a dequeue of one queue), with a close or an accumulator apply, or
    with a Send/Recv of a partition (partitions may take turns on one thread) stays on
    the tagged executor.
    """
    if len(waiting) != 1 or waiting[0].type in ("_Send", "_Recv"):
        return False
    return not any(n.type in WAKERS for n in nodes)


def uses_thread_pool(nodes: list, weights: List[str], policy: ExecutionPolicy) -> bool:
    """Whether a step without control flow runs kernels on the thread pool (rule 6 of
    `choose_executor`): >= 2 threads and two HEAVY kernels that can overlap."""
    return policy.inter_op_threads >= 2 and heavy_kernels_can_overlap(nodes, weights)


def heavy_kernels_can_overlap(nodes: list, weights: List[str]) -> bool:
    """Whether two HEAVY nodes of the topologically ordered `nodes` are at the same
    dataflow depth (longest path from a source, feeds not counted), hence independent."""
    depth = {}
    levels = []
    for n, w in zip(nodes, weights):
        if n.type == "_Feed":
            continue
        d = 0
        for p, _ in n.inputs:
            dp = depth.get(id(p))
            if dp is not None and dp + 1 > d:
                d = dp + 1
        for c in n.control_inputs:
            dc = depth.get(id(c))
            if dc is not None and dc + 1 > d:
                d = dc + 1
        depth[id(n)] = d
        if w == HEAVY:
            levels.append(d)
    return len(set(levels)) < len(levels)


_COSTED = frozenset({"MatMul", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
                     "Conv2DBackpropFilter"})


def static_cost(n) -> float:
    """Rough FLOP estimate of a node from static shapes (0 when unknown or trivial)."""
    op = n.op
    if op is None or n.type not in _COSTED:
        return 0.0
    try:
        if n.type == "MatMul":
            a, b = op.inputs[0].shape.as_list(), op.inputs[1].shape.as_list()
            m = a[1] if n.attrs.get("transpose_a") else a[0]
            kk = a[0] if n.attrs.get("transpose_a") else a[1]
            nn = b[0] if n.attrs.get("transpose_b") else b[1]
            return 2.0 * m * kk * nn
        if n.type == "BatchMatMulV2":
            return 2.0 * (op.outputs[0].shape.num_elements() or 0) * \
                (op.inputs[0].shape.as_list()[-2 if n.attrs.get("adj_x") else -1] or 0)
        # convolutions: 2 * (elements of the conv output) * (filter height * width * in)
        if n.type == "Conv2DBackpropFilter":
            filt, conv_out = op.outputs[0].shape, op.inputs[2].shape
        elif n.type == "Conv2DBackpropInput":
            filt, conv_out = op.inputs[1].shape, op.inputs[2].shape
        else:
            filt, conv_out = op.inputs[1].shape, op.outputs[0].shape
        kh, kw, cin = filt.as_list()[:3]
        return 2.0 * (conv_out.num_elements() or 0) * (kh or 0) * (kw or 0) * (cin or 0)
    except (TypeError, ValueError, IndexError):
        return 0.0
