"""Synchronous replication with backup workers (OSDI 2016 §4.4, Figure 4):
tf.train.SyncReplicasOptimizer.

TF1's design. Every replica (a worker running its own copy of the graph, between-graph)
computes gradients at its `local_step` and applies them to one accumulator per variable,
colocated with the variable; then it waits for a token from the *sync token queue* and
takes the token's value as its next local step. The chief runs the *chief queue runner*:
it takes the mean of `replicas_to_aggregate` (m) gradients from every accumulator, applies
them with the wrapped optimizer, increments the global step, and enqueues one token per
replica holding the new global step. With `total_num_replicas` n > m, n - m replicas are
*backup workers*: a step completes with the first m gradients, and a gradient computed at
an older step arrives stale at its accumulator and is dropped.

Beyond TF (all optional; keyword-only arguments of the constructor):

* Barrier diagnosis. A step stuck at the barrier (the chief waiting for gradients) is
  reported: after `barrier_diagnosis_secs` seconds without completing, the chief logs a
  tf.logging warning naming the global step and the replicas that have not contributed
  to it (and again each further `barrier_diagnosis_secs`). The default is the
  environment variable TENSORWEAVE_SYNC_BARRIER_DIAGNOSIS_SECS, else 60; 0 turns it
  off. Replicas are known by `replica_id`: the constructor argument, else the task index
  of the device the train op is built on (replica_device_setter's worker device), else
  unknown (the report then counts gradients without naming replicas). The ids are
  expected to be 0 .. total_num_replicas - 1, as worker task indices are. Each gradient
  carries its replica id to the accumulator in the apply op's `_replica_id` attr.
* Adaptive backup workers (`adaptive_backup=True` or a `BackupWorkerPolicy`): every
  `epoch_steps` global steps the chief chooses m from the measured times that replicas
  take to deliver their gradients (see `BackupWorkerPolicy`) and the take ops read m
  from a variable. It needs replica ids.
* Bounded staleness (`staleness_bound=k`): a gradient computed up to k steps before the
  accumulator's step is still accumulated (unscaled) into the step being aggregated,
  instead of being dropped. It is applied with `local_step + k`, so the accumulators
  themselves keep TF's rule.
"""
from __future__ import annotations

import os
import threading
from typing import Dict, List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.platform import tf_logging as logging
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.queue_runner import QueueRunner
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer", "BackupWorkerPolicy", "barrier_report"]

DIAGNOSIS_ENV = "TENSORWEAVE_SYNC_BARRIER_DIAGNOSIS_SECS"
_DEFAULT_DIAGNOSIS_SECS = 60.0


class BackupWorkerPolicy:
    """Chooses how many of n replicas' gradients to aggregate per step (m, so n - m
    backup workers) from measured step times, to maximise throughput.

    A *round* is one global step's times of all n replicas: how long after the step
    began each replica delivered its gradient for it (late, dropped gradients included).
    A step aggregating m gradients lasts about the m-th smallest time of its round, the
    m-th order statistic T_(m). Over the last `window` rounds the policy estimates
    E[T_(m)] as the mean of the rounds' m-th smallest times, and picks the m in
    [min_replicas, n] that maximises the gradients aggregated per second,
    m / E[T_(m)] (ties go to the larger m, whose updates average more gradients).
    The estimate is deterministic: the same rounds give the same choice.

    Args:
      total_num_replicas: n.
      min_replicas: the smallest m it may choose.
      window: the number of most recent rounds used.
      epoch_steps: global steps between two choices (read by SyncReplicasOptimizer).

    Raises:
      ValueError: min_replicas is not in [1, total_num_replicas].
    """

    def __init__(self, total_num_replicas: int, min_replicas: int = 1, window: int = 200,
                 epoch_steps: int = 20):
        if not 1 <= min_replicas <= total_num_replicas:
            raise ValueError("min_replicas must be in [1, %d], got %d"
                             % (total_num_replicas, min_replicas))
        self.total_num_replicas = total_num_replicas
        self.min_replicas = min_replicas
        self.window = window
        self.epoch_steps = epoch_steps
        self._rounds: List[np.ndarray] = []
        self._seen_steps: set = set()

    @property
    def num_rounds(self) -> int:
        return len(self._rounds)

    def record_round(self, times: Sequence[float]) -> None:
        """Adds one round: the n replicas' times for one step (any order)."""
        t = np.sort(np.asarray(times, np.float64))
        if t.shape != (self.total_num_replicas,):
            raise ValueError("a round needs %d times, got %d"
                             % (self.total_num_replicas, t.size))
        self._rounds.append(t)
        del self._rounds[:-self.window]

    def record_arrivals(self, steps, replica_ids, secs) -> int:
        """Adds the rounds found in an accumulator's arrival log (steps for which every
        replica 0..n-1 delivered a gradient, each counted once); returns how many."""
        n = self.total_num_replicas
        by_step: Dict[int, Dict[int, float]] = {}
        for s, r, t in zip(np.asarray(steps).tolist(), np.asarray(replica_ids).tolist(),
                           np.asarray(secs).tolist()):
            if 0 <= r < n and t == t and s not in self._seen_steps:
                by_step.setdefault(s, {}).setdefault(r, t)  # a replica's first arrival
        added = 0
        for s in sorted(by_step):
            if len(by_step[s]) == n:
                self.record_round([by_step[s][r] for r in range(n)])
                self._seen_steps.add(s)
                added += 1
        return added

    def expected_order_statistics(self) -> np.ndarray:
        """E[T_(m)] for m = 1..n (index m - 1), from the recorded rounds."""
        if not self._rounds:
            raise ValueError("no rounds recorded")
        return np.mean(np.stack(self._rounds), axis=0)

    def throughput(self) -> np.ndarray:
        """m / E[T_(m)] for m = 1..n: expected gradients aggregated per second."""
        e = self.expected_order_statistics()
        m = np.arange(1, self.total_num_replicas + 1, dtype=np.float64)
        with np.errstate(divide="ignore"):
            return np.where(e > 0, m / np.maximum(e, 1e-300), np.inf)

    def choose(self) -> Optional[int]:
        """The m to use next (None before any round has been recorded)."""
        if not self._rounds:
            return None
        thr = self.throughput()[self.min_replicas - 1:]
        best = np.flatnonzero(thr >= thr.max() * (1 - 1e-12))
        return int(best[-1]) + self.min_replicas


def barrier_report(statuses, total_num_replicas: int, replicas_to_aggregate: int) -> str:
    """The diagnosis of a step waiting at the barrier, from the run values of every
    accumulator's `replica_status()` (only their first four outputs are read)."""
    step = int(statuses[0][0])
    counts = [int(s[1]) for s in statuses]
    contributed = set(range(total_num_replicas))
    for s in statuses:
        contributed &= set(np.asarray(s[2]).tolist())
    missing = sorted(set(range(total_num_replicas)) - contributed)
    waited = max(float(s[3]) for s in statuses)
    named = any(len(np.asarray(s[2])) for s in statuses)
    msg = ("SyncReplicasOptimizer: global step %d has waited %.1f s at the barrier: %d of "
           "%d gradients aggregated (fewest among %d accumulators)"
           % (step, waited, min(counts), replicas_to_aggregate, len(statuses)))
    if named:
        msg += ("; replicas that have not contributed to step %d: %s (contributed: %s)"
                % (step, missing, sorted(contributed)))
    else:
        msg += "; the gradients carry no replica ids (pass replica_id= to name replicas)"
    return msg


def _diagnosis_secs(value) -> float:
    if value is None:
        value = os.environ.get(DIAGNOSIS_ENV, _DEFAULT_DIAGNOSIS_SECS)
    return max(0.0, float(value))


def _task_index(device: str) -> Optional[int]:
    from tensorweave.framework.device_spec import DeviceSpec
    try:
        return DeviceSpec.from_string(device or "").task
    except (ValueError, TypeError):
        return None


@tf_export("train.SyncReplicasOptimizer")
class SyncReplicasOptimizer(Optimizer):
    """Class to synchronize, aggregate gradients and pass them to the optimizer.

    In a typical asynchronous training environment, it's common to have some stale
    gradients. This optimizer avoids stale gradients by collecting gradients from all
    replicas, averaging them, then applying them to the variables in one shot, after
    which replicas can fetch the new variables and continue.

    The chief runs the chief queue runner (`get_chief_queue_runner`) and initializes the
    token queue (`get_init_tokens_op`); `make_session_run_hook` does both inside a
    MonitoredTrainingSession. See the module docstring for the tensorweave extensions
    (barrier diagnosis, adaptive backup workers, bounded staleness).
    """

    def __init__(self, opt, replicas_to_aggregate: int, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None,
                 use_locking: bool = False, name: str = "sync_replicas", *,
                 replica_id: Optional[int] = None, barrier_diagnosis_secs=None,
                 adaptive_backup=None, staleness_bound: int = 0):
        """Construct a sync_replicas optimizer.

        Args:
          opt: The actual optimizer that will be used to compute and apply the
            gradients. Must be one of the Optimizer classes.
          replicas_to_aggregate: number of replicas to aggregate for each variable
            update.
          total_num_replicas: Total number of tasks/workers/replicas, could be different
            from replicas_to_aggregate. If total_num_replicas > replicas_to_aggregate:
            it is backup_replicas + replicas_to_aggregate. If total_num_replicas <
            replicas_to_aggregate: Replicas compute multiple batches per update to
            variables.
          variable_averages: Optional `ExponentialMovingAverage` object, used to maintain
            moving averages for the variables passed in `variables_to_average`.
          variables_to_average: a list of variables that need to be averaged. Only
            needed if variable_averages is passed in.
          use_locking: If True use locks for update operation.
          name: string. Optional name of the returned operation.
          replica_id: tensorweave: this replica's index (0 .. total_num_replicas - 1),
            for barrier diagnosis and adaptive backup workers; None: the task index of
            the device scope the train op is built in, if any.
          barrier_diagnosis_secs: tensorweave: seconds a step may wait at the barrier
            before the chief logs which replicas have not contributed (None: the
            environment variable TENSORWEAVE_SYNC_BARRIER_DIAGNOSIS_SECS, else 60;
            0: never).
          adaptive_backup: tensorweave: True or a `BackupWorkerPolicy` to choose
            replicas_to_aggregate from measured step times (replicas_to_aggregate is
            the first value); None or False: fixed.
          staleness_bound: tensorweave: gradients computed up to this many steps late
            are aggregated into the current step instead of being dropped.

        Raises:
          ValueError: bad replica counts, staleness_bound, or adaptive_backup combined
            with staleness_bound or with total_num_replicas < replicas_to_aggregate.
        """
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        if replicas_to_aggregate < 1 or total_num_replicas < 1:
            raise ValueError("replicas_to_aggregate and total_num_replicas must be "
                             "positive, got %d and %d" % (replicas_to_aggregate,
                                                         total_num_replicas))
        if staleness_bound < 0:
            raise ValueError("staleness_bound must be >= 0, got %d" % staleness_bound)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                     replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []
        self._replica_id = replica_id
        self._diagnosis_secs = _diagnosis_secs(barrier_diagnosis_secs)
        self._staleness_bound = int(staleness_bound)
        if adaptive_backup is True:
            adaptive_backup = BackupWorkerPolicy(total_num_replicas)
        self._policy: Optional[BackupWorkerPolicy] = adaptive_backup or None
        if self._policy is not None:
            if staleness_bound:
                raise ValueError("adaptive_backup and staleness_bound cannot be combined: "
                                 "the policy times gradients by the step they were "
                                 "computed at")
            if total_num_replicas < replicas_to_aggregate:
                raise ValueError("adaptive_backup needs total_num_replicas >= "
                                 "replicas_to_aggregate")
            if self._policy.total_num_replicas != total_num_replicas:
                raise ValueError("the BackupWorkerPolicy is for %d replicas, not %d"
                                 % (self._policy.total_num_replicas, total_num_replicas))
        self._num_required = replicas_to_aggregate  # a Python int or, adaptive, a variable
        self._status_ops: list = []
        self._set_num_required = None

    def compute_gradients(self, *args, **kwargs):
        """Compute gradients of "loss" for the variables in "var_list" (delegates to the
        wrapped optimizer)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Apply gradients to variables.

        This contains most of the synchronization implementation and also wraps the
        apply_gradients() from the real optimizer.

        Args:
          grads_and_vars: List of (gradient, variable) pairs as returned by
            compute_gradients().
          global_step: Optional Variable to increment by one after the variables have
            been updated.
          name: Optional name for the returned operation. Default to the name passed to
            the Optimizer constructor.

        Returns:
          train_op: The op to dequeue a token so the replicas can exit this batch and
          start the next one. This is executed by each replica.

        Raises:
          ValueError: If the grads_and_vars is empty.
          ValueError: If global step is not provided, the staleness cannot be checked.
        """
        from tensorweave.ops.array.array_fill_ops import fill
        from tensorweave.ops.control_flow.structure import group, no_op
        from tensorweave.ops.data_flow.accumulator_ops import ConditionalAccumulator, \
            SparseConditionalAccumulator
        from tensorweave.ops.data_flow.queue_classes import FIFOQueue
        from tensorweave.ops.state import state_ops, variables

        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        g = _graph.get_default_graph()
        self._global_step = global_step
        train_ops, aggregated_grad, var_list = [], [], []

        # the anchor is placed on this replica's task; the local step lives with it
        local_anchor = no_op()
        replica_id = self._replica_id
        if replica_id is None:
            replica_id = _task_index(local_anchor.device)
        self._resolved_replica_id = -1 if replica_id is None else int(replica_id)
        step_dtype = global_step.dtype.base_dtype
        with g.colocate_with(local_anchor):
            self._local_step = variables.Variable(
                initial_value=0, trainable=False,
                collections=[_graph.GraphKeys.LOCAL_VARIABLES], dtype=step_dtype,
                name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        # outside the device scope: each check runs with its variable (TF's placer
        # overrides a device requested against a variable's edge; ours rejects it)
        with g.device(None):
            self.ready_for_local_init_op = variables.report_uninitialized_variables(
                variables.global_variables())

        if self._policy is not None:
            with g.device(global_step.device), _graph.name_scope(None):
                self._num_required = variables.Variable(
                    self._replicas_to_aggregate, trainable=False, dtype=_dt.int32,
                    name="%s_replicas_to_aggregate" % self._name)
                self._new_num_required = _placeholder_int32()
                self._set_num_required = state_ops.assign(self._num_required,
                                                          self._new_num_required)

        applied_step = self._local_step
        if self._staleness_bound:
            applied_step = self._local_step + self._staleness_bound
        rid = self._resolved_replica_id if self._resolved_replica_id >= 0 else None
        with _graph.name_scope(None, self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with g.device(var.device):
                    if grad is None:
                        aggregated_grad.append(None)  # pass-through
                        continue
                    if isinstance(grad, Tensor):
                        acc = ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(),
                            shared_name=var.name + "/grad_accum")
                        train_ops.append(acc.apply_grad(grad, local_step=applied_step,
                                                        replica_id=rid))
                        aggregated_grad.append(acc.take_grad(self._num_required))
                    elif isinstance(grad, IndexedSlices):
                        acc = SparseConditionalAccumulator(
                            grad.dtype, shape=(), shared_name=var.name + "/grad_accum")
                        train_ops.append(acc.apply_indexed_slices_grad(
                            grad, local_step=applied_step, replica_id=rid))
                        aggregated_grad.append(
                            acc.take_indexed_slices_grad(self._num_required))
                    else:
                        raise ValueError("Unknown grad type!")
                    self._accumulator_list.append((acc, var.device))
                    self._status_ops.append(acc.replica_status())

            aggregated_grads_and_vars = list(zip(aggregated_grad, var_list))

            # the sync op runs on the global step's device
            with g.device(global_step.device), _graph.name_scope(""):
                update_op = self._opt.apply_gradients(aggregated_grads_and_vars,
                                                      global_step)
                sync_token_queue = FIFOQueue(-1, step_dtype, shapes=(),
                                             name="sync_token_q", shared_name="sync_token_q")
                self._sync_token_queue = sync_token_queue
                # a replica waits for a token before its next step
                with g.control_dependencies(train_ops):
                    token = sync_token_queue.dequeue()
                with g.colocate_with(self._local_step):  # on this replica's task
                    train_op = state_ops.assign(self._local_step, token)
                with g.control_dependencies([update_op]):
                    # tokens for the next step, once the update is done
                    tokens = fill([self._tokens_per_step], global_step)
                    sync_op = sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with g.control_dependencies([sync_op]), _graph.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                # a take still waiting when the chief's session closes is cancelled:
                # that ends the runner's thread quietly, as a closed queue does
                self._chief_queue_runner = QueueRunner(
                    sync_token_queue, [sync_op], queue_closed_exception_types=(
                        errors.OutOfRangeError, errors.CancelledError))
            for acc, dev in self._accumulator_list:
                with g.device(dev):
                    chief_init_ops.append(acc.set_global_step(global_step,
                                                              name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """Returns the QueueRunner for the chief to execute.

        This includes the operations to synchronize replicas: aggregate gradients,
        apply to variables, increment global step, insert tokens to token queue.

        Raises:
          ValueError: If this is called before apply_gradients().
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        """Return a slot named "name" created for "var" by the wrapped optimizer."""
        return self._opt.get_slot(*args, **kwargs)

    def variables(self) -> list:
        """Fetches a list of optimizer variables in the default graph (the wrapped
        optimizer's)."""
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs) -> List[str]:
        """Return a list of the names of slots created by the wrapped optimizer."""
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens: int = -1):
        """Returns the op to fill the sync_token_queue with the tokens.

        This is supposed to be executed in the beginning of the chief/sync thread so
        that even if the total_num_replicas is less than replicas_to_aggregate, the model
        can still proceed as the replicas can compute multiple steps per variable update.
        Make sure: `num_tokens >= replicas_to_aggregate - total_num_replicas`.

        Args:
          num_tokens: Number of tokens to add to the queue.

        Returns:
          An op for the chief/sync replica to fill the token queue.

        Raises:
          ValueError: If this is called before apply_gradients().
          ValueError: If num_tokens are smaller than replicas_to_aggregate -
            total_num_replicas.
        """
        from tensorweave.ops.array.array_fill_ops import fill
        from tensorweave.ops.control_flow.structure import no_op
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after "
                             "apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        g = _graph.get_default_graph()
        if num_tokens > 0:
            with g.device(self._global_step.device), _graph.name_scope(""):
                tokens = fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1):
        """Creates a hook to handle SyncReplicasHook ops such as initialization."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    # --- tensorweave extensions ------------------------------------------------------
    @property
    def policy(self) -> Optional[BackupWorkerPolicy]:
        """The adaptive backup-worker policy (None when m is fixed)."""
        return self._policy

    def replica_status_ops(self) -> list:
        """One `replica_status()` tuple of tensors per accumulator (see
        ConditionalAccumulatorBase.replica_status)."""
        return list(self._status_ops)

    def start_barrier_monitor(self, session, coord=None) -> Optional[threading.Thread]:
        """Starts the chief's thread that diagnoses a stuck barrier and, when adaptive,
        chooses replicas_to_aggregate (the hook calls it on the chief). Returns the
        thread, or None when there is nothing to do."""
        if not self._status_ops or (not self._diagnosis_secs and self._policy is None):
            return None
        monitor = _BarrierMonitor(self, session, coord)
        t = threading.Thread(target=monitor.run, name="SyncReplicasBarrierMonitor",
                             daemon=True)
        if coord is not None:
            coord.register_thread(t)
        t.start()
        return t


def _placeholder_int32():
    from tensorweave.ops.array.constant_op import placeholder
    return placeholder(_dt.int32, [], name="new_replicas_to_aggregate")


class _BarrierMonitor:
    """The chief's watcher: polls every accumulator's replica status; warns once per
    `barrier_diagnosis_secs` that a step has waited at the barrier; every
    `policy.epoch_steps` global steps feeds the arrival log to the adaptive policy and
    sets the number of gradients to take."""

    def __init__(self, opt: SyncReplicasOptimizer, session, coord):
        self.opt, self.session, self.coord = opt, session, coord
        self.stop = threading.Event()
        secs = opt._diagnosis_secs
        self.poll = min(1.0, secs / 4) if secs else 0.5
        self.warned_step, self.warned_at = None, 0.0
        self.last_choice_step = 0
        self.num_required = opt._replicas_to_aggregate

    def _stopping(self) -> bool:
        if self.coord is not None:
            return self.coord.wait_for_stop(self.poll)
        return self.stop.wait(self.poll)

    def run(self) -> None:
        opt = self.opt
        while not self._stopping():
            try:
                statuses = self.session.run(opt._status_ops)
            except (errors.OpError, RuntimeError):
                if self.coord is not None and self.coord.should_stop():
                    return
                if getattr(self.session, "_closed", False):
                    return
                continue
            self._diagnose(statuses)
            if opt._policy is not None:
                self._adapt(statuses)

    def _diagnose(self, statuses) -> None:
        secs = self.opt._diagnosis_secs
        if not secs:
            return
        step, waited = int(statuses[0][0]), max(float(s[3]) for s in statuses)
        if step != self.warned_step:
            self.warned_step, self.warned_at = step, 0.0
        if waited >= self.warned_at + secs:
            self.warned_at = waited
            logging.warning("%s", barrier_report(statuses, self.opt._total_num_replicas,
                                                 self.num_required))

    def _adapt(self, statuses) -> None:
        policy = self.opt._policy
        step = int(statuses[0][0])
        if step - self.last_choice_step < policy.epoch_steps:
            return
        self.last_choice_step = step
        _, _, _, _, a_steps, a_ids, a_secs = statuses[0]
        policy.record_arrivals(a_steps, a_ids, a_secs)
        m = policy.choose()
        if m is None or m == self.num_required:
            return
        try:
            self.session.run(self.opt._set_num_required,
                             {self.opt._new_num_required: m})
        except (errors.OpError, RuntimeError):
            return
        logging.info("SyncReplicasOptimizer: aggregating %d of %d replicas from global "
                     "step %d (adaptive backup workers)", m, self.opt._total_num_replicas,
                     step)
        self.num_required = m


class _SyncReplicasOptimizerHook(SessionRunHook):
    """A SessionRunHook handles ops related to SyncReplicasOptimizer."""

    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool,
                 num_tokens: int):
        """Creates hook to handle SyncReplicasOptimizer initialization ops.

        Args:
          sync_optimizer: `SyncReplicasOptimizer` which this hook will initialize.
          is_chief: `Bool`, whether is this a chief replica or not.
          num_tokens: Number of tokens to add to the queue.
        """
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        if not self._sync_optimizer._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        opt = self._sync_optimizer
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._ready_for_local_init_op = opt.ready_for_local_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._ready_for_local_init_op = opt.ready_for_local_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        """Runs SyncReplicasOptimizer initialization ops."""
        from tensorweave.train.session_manager import _ready
        local_init_success, msg = _ready(
            self._ready_for_local_init_op, session,
            "Model is not ready for SyncReplicasOptimizer local init.")
        if not local_init_success:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer "
                "local_init. Init op: %s, error: %s" % (self._local_init_op.name, msg))
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
        if self._is_chief:
            self._sync_optimizer.start_barrier_monitor(session, coord)
