"""tensorweave.runtime: running steps of a graph in this process.

How a `Session.run` runs (the map; DESIGN.md has the why):

  session.py   Session.run -> _get_plan (cached per (fetches, targets, feeds)) ->
               plan.run(feed_values, env, options, trace). Nothing else decides anything
               per run.
  plan.py      build_plan: prune -> place -> optimize (optimizer.py, steps without
               control flow) -> partition (several devices) -> policy.choose_executor
               -> lower into the plan type of that executor. KernelBinder binds nodes
               to kernels and KernelContexts.
  policy.py    ExecutionPolicy (threads, heavy threshold, TW_EXECUTOR override; built once
               per session from ConfigProto and the environment), choose_executor (THE
               decision, with its rules in its docstring) and kernel_weight (THE
               definition of a cheap kernel). Change scheduling here.

Which executor runs what (one plan type each, each with its own `run`):

  executor       plan type        runs                                    code
  SEQUENTIAL     SequentialPlan   no control flow, no waits, nothing to   executor.run_steps
                                  overlap: plan order, calling thread
  DATAFLOW       DataflowPlan     no control flow; asynchronous kernels   executor.run_dataflow
                                  (queues) or heavy kernels that overlap
                                  on the inter-op pool. Without pool
                                  kernels it runs like SEQUENTIAL until a
                                  kernel waits, then schedules
  STRUCTURED     StructuredPlan   control flow of cheap kernels: each     frames.py (LoopProgram:
                                  while loop is one generated function,    one generated Python
                                  iterations in order; a step's one        function per loop)
                                  asynchronous kernel waits in place when
                                  nothing in the step can feed it
                                  (policy.waits_in_place)
  TAGGED         TaggedPlan       control flow with kernels that must     tagged.run_tagged
                                  wait while others run, or heavy
                                  kernels overlapping across iterations
                                  (parallel_iterations); tagged tokens;
                                  runs of cheap nodes scheduled as one
                                  generated function each (islands.py)

  A step placed on several devices: partition.py splits it into one step graph per
  device (_Send/_Recv pairs on cross-device edges, send_recv_ops.py, exchanging values
  through the step's rendezvous.py), each lowered into one of the plans above, with
  Recvs started as late as their consumers allow (recv_scheduling.py);
  partitioned_plan.PartitionedPlan runs them concurrently. Control flow on one device
  with only live root-frame values crossing: its partition runs on TAGGED. Control flow
  spanning devices (partitioned_plan.check_control_flow): every partition runs on
  TAGGED, dead values travel over Send/Recv, keys carry frame and iteration
  (send_recv_ops.InFrameState), and each device of a split loop gets the control-loop
  state machine of EuroSys Figure 6 (partition._add_control_loops); partitions of cheap
  kernels then take turns on the calling thread (PartitionedPlan.interleaved).

  TW_EXECUTOR=tagged runs every step with control flow on TAGGED (tests use it to run
  both control-flow executors).

Where to change things:
  * which executor a step gets, which kernels go to the pool: policy.py;
  * the per-step kernel call and the dataflow scheduler: executor.py (run_steps is the
    one hot loop; keep per-step work there to a tuple unpack, a call and a store);
  * loop compilation and the generated code: frames.py (LoopProgram._generate); the
    tagged executor's islands: islands.py (fuse_islands);
  * tracing: every executor records into executor.StepTrace (a record per kernel
    execution, with frame name and iteration inside loops; nothing runs when tracing is
    off, and a loop's traced variant is generated on first use); step_stats.py turns
    the records into RunMetadata.step_stats (fields documented on config.NodeExecStats);
    a cluster's tasks return theirs with RunGraph (distribute/worker.py).

The deterministic mode (ConfigProto experimental deterministic, TF_DETERMINISTIC_OPS=1):
determinism.py says what it fixes and where; everything is decided when plans are built
(policy.kernel_weight, plan.KernelBinder.bind), never per kernel call.

Other modules: config.py (ConfigProto, RunOptions, RunMetadata), context.py (tf.config's
process-wide settings and the ConfigProto a Session made without one runs with),
placer.py (which device
runs each node: colocation groups, merged requests, kernels per device type, TF1's
default rule or the opt-in cost model), devices.py (devices and byte-counting
allocators), gpu.py (the CuPy GPU device; framework/gpu_kernels.py lists the CPU kernel
bodies that serve it; feeds and fetches on it are copied by the session, per
Plan.feeds_to_device/fetches_to_host), resources.py (per-device resource containers), values.py (the dead token of
control flow), optimizer.py (plan-time graph passes).
"""
