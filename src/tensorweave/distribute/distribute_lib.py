"""`tf.distribute` in graph mode: the Strategy / StrategyExtended / ReplicaContext base
classes, the default strategy, and the context functions (`get_strategy`,
`get_replica_context`, `in_cross_replica_context`, ...).

The context is a stack per (thread, graph), as in TF: entering `strategy.scope()` pushes
a *cross-replica* entry; a strategy running `fn` once per replica pushes a *replica*
entry in the thread that builds that replica. With nothing pushed, the default strategy
and its default replica context are current, so library code may always ask.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Callable, Optional, Sequence

from tensorweave.distribute.reduce_util import InputReplicationMode, ReduceOp, as_reduce_op
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export


# --- the context stack ------------------------------------------------------------------
class _Mode:
    """One entry of the context stack: the current strategy, and either the replica
    context (in replica context) or the strategy again (in cross-replica context)."""

    __slots__ = ("strategy", "replica_context", "cross_replica")

    def __init__(self, strategy, replica_context=None, cross_replica=None):
        self.strategy = strategy
        self.replica_context = replica_context
        self.cross_replica = cross_replica


_local = threading.local()


def _stack(g=None) -> list:
    """The context stack of this thread for graph `g` (default: the default graph).
    Weakly keyed so a dropped graph does not stay alive through its stack."""
    stacks = getattr(_local, "stacks", None)
    if stacks is None:
        stacks = _local.stacks = weakref.WeakKeyDictionary()
    g = g if g is not None else _graph.get_default_graph()
    s = stacks.get(g)
    if s is None:
        s = stacks[g] = []
    return s


def _current_mode() -> _Mode:
    s = _stack()
    return s[-1] if s else _default_mode()


@contextlib.contextmanager
def _pushed(mode: _Mode, g=None):
    s = _stack(g)
    s.append(mode)
    try:
        yield
    finally:
        s.pop()


def _update_replica_id() -> Optional[int]:
    """Inside `extended.update(...)`: the index of the copy being updated."""
    return getattr(_local, "update_replica_id", None)


@contextlib.contextmanager
def update_context(replica_id: int):
    """Marks the ops built inside as the update of copy `replica_id` of mirrored
    variables: reading a mirrored variable there gives that copy (TF's UpdateContext)."""
    old = getattr(_local, "update_replica_id", None)
    _local.update_replica_id = replica_id
    try:
        yield
    finally:
        _local.update_replica_id = old


# --- context functions ------------------------------------------------------------------
@tf_export("distribute.get_strategy")
def get_strategy() -> "Strategy":
    """The current strategy: the one whose `scope()` (or replica) is being built, else
    the default strategy."""
    return _current_mode().strategy


@tf_export("distribute.has_strategy")
def has_strategy() -> bool:
    """Whether a strategy other than the default one is current."""
    s = _stack()
    return bool(s) and s[-1].strategy is not _get_default_strategy()


@tf_export("distribute.get_replica_context")
def get_replica_context() -> Optional["ReplicaContext"]:
    """The current ReplicaContext, or None in cross-replica context (inside a
    non-default `strategy.scope()` but outside `strategy.run`). Outside any scope: the
    default replica context."""
    return _current_mode().replica_context


def get_cross_replica_context() -> Optional["Strategy"]:
    """The strategy in cross-replica context, else None."""
    return _current_mode().cross_replica


@tf_export("distribute.in_cross_replica_context")
def in_cross_replica_context() -> bool:
    """Whether building in cross-replica context (in a strategy's scope, not in a
    replica)."""
    return _current_mode().cross_replica is not None


@tf_export("distribute.experimental_set_strategy")
def experimental_set_strategy(strategy: Optional["Strategy"]) -> None:
    """Makes `strategy` current for the default graph in this thread, as if its
    `scope()` had been entered (None goes back to the default strategy).

    Raises:
      RuntimeError: called inside a `scope()` that was entered with `with`.
    """
    old = getattr(_graph.get_default_graph(), "_global_distribute_strategy_scope", None)
    if old is not None:
        old.__exit__(None, None, None)
        _graph.get_default_graph()._global_distribute_strategy_scope = None
    if has_strategy():
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _graph.get_default_graph()._global_distribute_strategy_scope = scope


@tf_export("distribute.get_loss_reduction")
def get_loss_reduction() -> ReduceOp:
    """How the per-replica losses combine: SUM, unless the strategy scales the loss for
    an Estimator and the last `tf.losses` reduction was not a sum (then MEAN), as TF1."""
    if not getattr(get_strategy(), "_scale_loss_for_estimator", False):
        return ReduceOp.SUM
    last = getattr(_graph.get_default_graph(), "_last_loss_reduction", None)
    if last in ("weighted_sum", "sum"):  # tf.losses.Reduction.SUM, ReductionV2.SUM
        return ReduceOp.SUM
    return ReduceOp.MEAN


# --- replica context ----------------------------------------------------------------------
@tf_export("distribute.ReplicaContext")
class ReplicaContext:
    """The context of building one replica's computation.

    Args:
      strategy: the Strategy running the replicas.
      replica_id_in_sync_group: this replica's index.
    """

    def __init__(self, strategy: "Strategy", replica_id_in_sync_group: int):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    def __enter__(self):
        _stack().append(_Mode(self._strategy, replica_context=self))
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    @property
    def strategy(self) -> "Strategy":
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        """This replica's index, as a scalar int32 Tensor (as TF)."""
        from tensorweave.ops.array.constant_op import constant
        return constant(self._replica_id, name="replica_id_in_sync_group")

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn: Callable, args=(), kwargs=None):
        """Calls `merge_fn(strategy, *args, **kwargs)` once, in cross-replica context,
        with each argument gathered from every replica (a PerReplica value where the
        replicas passed different values); returns this replica's part of its result.

        Args:
          merge_fn: the function to call.
          args, kwargs: this replica's arguments.

        Returns:
          This replica's component of `merge_fn`'s result.
        """
        return self._merge_call(merge_fn, tuple(args), dict(kwargs or {}))

    def _merge_call(self, merge_fn, args, kwargs):
        # one replica: nothing to gather, just switch to cross-replica context
        with _pushed(_Mode(self._strategy, cross_replica=self._strategy)):
            return merge_fn(self._strategy, *args, **kwargs)

    def all_reduce(self, reduce_op, value):
        """`value` reduced over all replicas (each replica gets the result)."""
        reduce_op = as_reduce_op(reduce_op)

        def merge(strategy, v):
            return strategy.extended.batch_reduce_to(
                reduce_op, [(x, x) for x in nest.flatten(v)])
        flat = self.merge_call(merge, args=(value,))
        return nest.pack_sequence_as(value, list(flat))


# --- extended and strategy base classes ------------------------------------------------------
@tf_export("distribute.StrategyExtended")
class StrategyExtended:
    """The strategy's lower-level API (`strategy.extended`): variable placement,
    reductions and updates. Subclasses implement the `_...` hooks."""

    def __init__(self, container_strategy: "Strategy"):
        self._container_strategy_weakref = weakref.ref(container_strategy)
        self._default_device: Optional[str] = None
        self._colocate_devices: Optional[tuple] = None

    def _container_strategy(self) -> "Strategy":
        return self._container_strategy_weakref()

    # --- devices ---------------------------------------------------------------------
    @property
    def worker_devices(self) -> tuple:
        return self._worker_devices()

    @property
    def parameter_devices(self) -> tuple:
        return self._worker_devices()

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self._worker_devices())

    def _worker_devices(self) -> tuple:
        raise NotImplementedError("must be implemented in descendants")

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def non_slot_devices(self, var_list) -> tuple:
        """The devices of variables not tied to one variable (Adam's beta powers)."""
        return self._worker_devices()

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        """Variables created inside are placed like `colocate_with_variable`."""
        devices = getattr(colocate_with_variable, "_devices", None)
        old = self._colocate_devices
        self._colocate_devices = tuple(devices) if devices else \
            (colocate_with_variable.device,)
        try:
            yield
        finally:
            self._colocate_devices = old

    def variable_created_in_scope(self, v) -> bool:
        return getattr(v, "_distribute_strategy", None) is self._container_strategy()

    # --- reductions and updates ------------------------------------------------------------
    def reduce_to(self, reduce_op, value, destinations, experimental_hints=None):
        """`value` (a PerReplica value) combined across replicas onto `destinations`."""
        from tensorweave.distribute import values as _values
        reduce_op = as_reduce_op(reduce_op)
        if not isinstance(value, _values.DistributedValues):
            return _values.reduce_non_distributed(reduce_op, value, destinations,
                                                  self._num_replicas_in_sync)
        return self._reduce_to(reduce_op, value, destinations)

    def batch_reduce_to(self, reduce_op, value_destination_pairs,
                        experimental_hints=None) -> list:
        """`reduce_to` of each (value, destinations) pair."""
        return [self.reduce_to(reduce_op, v, d) for v, d in value_destination_pairs]

    def update(self, var, fn: Callable, args=(), kwargs=None, group: bool = True):
        """Runs `fn(v, *args, **kwargs)` on each copy `v` of `var` with the matching
        component of each argument; returns the results (grouped into one op when
        `group`)."""
        return self._update(var, fn, tuple(args), dict(kwargs or {}), group)

    def update_non_slot(self, colocate_with, fn: Callable, args=(), kwargs=None,
                        group: bool = True):
        """Runs `fn(*args, **kwargs)` once per device of `colocate_with`, where reads of
        mirrored variables give that device's copy."""
        return self._update_non_slot(colocate_with, fn, tuple(args), dict(kwargs or {}),
                                     group)

    def call_for_each_replica(self, fn: Callable, args=(), kwargs=None):
        """`fn(*args, **kwargs)` built once per replica, in replica context."""
        return self._call_for_each_replica(fn, tuple(args), dict(kwargs or {}))

    def read_var(self, v):
        return v.read_value()

    def value_container(self, value):
        """The distributed variable a component belongs to (else `value`)."""
        return getattr(value, "_distributed_container", None) or value

    def broadcast_to(self, tensor, destinations):
        return tensor

    def _reduce_to(self, reduce_op, value, destinations):
        raise NotImplementedError("must be implemented in descendants")

    def _update(self, var, fn, args, kwargs, group):
        raise NotImplementedError("must be implemented in descendants")

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        raise NotImplementedError("must be implemented in descendants")

    def _call_for_each_replica(self, fn, args, kwargs):
        raise NotImplementedError("must be implemented in descendants")

    def _create_variable(self, next_creator, **kwargs):
        raise NotImplementedError("must be implemented in descendants")

    def _scope(self, strategy: "Strategy"):
        return _StrategyScope(strategy)


class _StrategyScope:
    """What `strategy.scope()` enters: cross-replica context, the strategy's variable
    creator (variables become the strategy's: mirrored, or placed on its device) and
    its default device."""

    def __init__(self, strategy: "Strategy"):
        self._strategy = strategy
        self._stack = None

    def __enter__(self):
        from tensorweave.ops.state.variables import variable_creator_scope
        current = get_strategy()
        if current is not self._strategy and has_strategy():
            raise RuntimeError("Mixing different tf.distribute.Strategy objects: %s is "
                               "not %s" % (self._strategy, current))
        stack = contextlib.ExitStack()
        g = _graph.get_default_graph()
        stack.enter_context(_pushed(_Mode(self._strategy, cross_replica=self._strategy),
                                    g))
        ext = self._strategy.extended
        if current is not self._strategy:
            # re-entering the scope (run() inside scope()) adds no second creator,
            # which would mirror each copy again
            stack.enter_context(variable_creator_scope(ext._create_variable))
        if ext._default_device:
            stack.enter_context(g.device(ext._default_device))
        self._stack = stack
        return self._strategy

    def __exit__(self, *exc):
        stack, self._stack = self._stack, None
        stack.__exit__(*exc)
        return False


@tf_export("distribute.Strategy")
class Strategy:
    """A way to run a computation on several devices (TF1 `tf.distribute.Strategy`,
    graph mode). Subclasses provide `extended`.

    Args:
      extended: the StrategyExtended implementing the strategy.
    """

    def __init__(self, extended: StrategyExtended):
        self._extended = extended
        self._scale_loss_for_estimator = False

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return self._extended._num_replicas_in_sync

    def scope(self):
        """A context manager: variables created inside are the strategy's, and the
        code inside is in cross-replica context."""
        return self._extended._scope(self)

    # --- running -----------------------------------------------------------------------
    def run(self, fn: Callable, args=(), kwargs=None, options=None):
        """Builds `fn(*args, **kwargs)` once per replica, each on its device in replica
        context, with each PerReplica argument replaced by that replica's component.

        Returns:
          The results, regrouped: a PerReplica value where replicas differ.
        """
        with self.scope():
            return self._extended.call_for_each_replica(fn, args=args, kwargs=kwargs)

    def experimental_run_v2(self, fn: Callable, args=(), kwargs=None, options=None):
        """The former name of `run`."""
        return self.run(fn, args=args, kwargs=kwargs, options=options)

    def experimental_run(self, fn: Callable, input_iterator=None):
        """`run(fn, args=(input_iterator.get_next(),))` (or no argument without an
        iterator)."""
        with self.scope():
            args = (input_iterator.get_next(),) if input_iterator is not None else ()
        return self.run(fn, args=args)

    def reduce(self, reduce_op, value, axis: Optional[int] = None):
        """`value` combined across replicas (and along `axis` too, if given).

        Args:
          reduce_op: ReduceOp.SUM or MEAN (or "SUM"/"MEAN").
          value: a PerReplica value (or a plain Tensor, the same on every replica).
          axis: None to combine replicas elementwise; an int to also reduce that axis
            of each replica's value (MEAN averages over all elements of all replicas).

        Returns:
          A Tensor.
        """
        from tensorweave.distribute import values as _values
        reduce_op = as_reduce_op(reduce_op)
        with self.scope():
            dest = "/device:CPU:0" if len(self.extended.worker_devices) > 1 else \
                self.extended.worker_devices[0]
            if axis is None:
                return self._extended.reduce_to(reduce_op, value, dest)
            return _values.reduce_along_axis(self, reduce_op, value, axis, dest)

    def experimental_local_results(self, value) -> tuple:
        """The components of `value` on this worker's replicas (a 1-tuple for a plain
        value)."""
        from tensorweave.distribute import values as _values
        return _values.local_results(value)

    def unwrap(self, value) -> tuple:
        return self.experimental_local_results(value)

    def group(self, value, name: Optional[str] = None):
        """One op that runs every component of `value`."""
        from tensorweave.ops.control_flow import structure
        flat = []
        for v in nest.flatten(value):
            flat.extend(self.experimental_local_results(v))
        return structure.group(*flat, name=name)

    # --- input ------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        """`dataset` (batched by the global batch size) split across the replicas."""
        from tensorweave.distribute import input_lib
        return input_lib.DistributedDataset(dataset, self)

    def make_dataset_iterator(self, dataset):
        """An iterator over `dataset` whose `get_next()` gives each replica its part of
        every global batch (call `initialize()` first)."""
        from tensorweave.distribute import input_lib
        return input_lib.DatasetIterator(dataset, self)

    def make_input_fn_iterator(self, input_fn: Callable,
                               replication_mode=InputReplicationMode.PER_WORKER):
        """An iterator over `input_fn(InputContext)`'s dataset, each replica taking its
        own (per-replica) batch.

        Raises:
          ValueError: replication_mode is not PER_WORKER.
        """
        from tensorweave.distribute import input_lib
        if replication_mode != InputReplicationMode.PER_WORKER:
            raise ValueError("Input replication mode not supported: %r" % replication_mode)
        return input_lib.InputFunctionIterator(input_fn, self)

    def experimental_make_numpy_iterator(self, *args, **kwargs):
        raise NotImplementedError("tensorweave: Strategy.experimental_make_numpy_iterator "
                                  "is not supported; use tf.data.Dataset."
                                  "from_tensor_slices with make_dataset_iterator")

    def colocate_vars_with(self, colocate_with_variable):
        return self._extended.colocate_vars_with(colocate_with_variable)

    def configure(self, session_config=None, cluster_spec=None, task_type=None,
                  task_id=None) -> None:
        """Nothing to configure for local devices."""

    def update_config_proto(self, config_proto):
        return config_proto

    @contextlib.contextmanager
    def _scale_loss_for_estimator_enabled(self):
        """While entered, TF1 optimizers scale each replica's loss by
        1/num_replicas_in_sync unless the last `tf.losses` reduction was a SUM (what the
        Estimator does, for TF1 models written for one device)."""
        old = self._scale_loss_for_estimator
        self._scale_loss_for_estimator = True
        try:
            yield
        finally:
            self._scale_loss_for_estimator = old

    def __deepcopy__(self, memo):
        # a strategy is shared, not copied (RunConfig copies are shallow for it in TF)
        return self


# --- the default strategy --------------------------------------------------------------------
class _DefaultExtended(StrategyExtended):
    """One replica, no placement: what code sees when no strategy is in use."""

    def _worker_devices(self) -> tuple:
        return ("/device:CPU:0",)

    def _create_variable(self, next_creator, **kwargs):
        return next_creator(**kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        return value

    def _update(self, var, fn, args, kwargs, group):
        with _graph.colocate_with(var):
            result = fn(var, *args, **kwargs)
        return result if group else (result,)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        result = fn(*args, **kwargs)
        return result if group else (result,)

    def _call_for_each_replica(self, fn, args, kwargs):
        with ReplicaContext(self._container_strategy(), 0):
            return fn(*args, **kwargs)

    def _scope(self, strategy):
        return _DefaultScope(strategy)


class _DefaultScope:
    """The default strategy's scope. As in TF, code inside stays in the default replica
    context (not cross-replica); entering it inside another strategy's scope is an
    error."""

    def __init__(self, strategy):
        self._strategy = strategy

    def __enter__(self):
        if has_strategy():
            raise RuntimeError("Must not nest tf.distribute.Strategy scopes.")
        _stack().append(_default_mode())
        return self._strategy

    def __exit__(self, *exc):
        _stack().pop()
        return False


class _DefaultReplicaContext(ReplicaContext):
    """The replica context outside any strategy: replica 0 of 1."""

    @property
    def replica_id_in_sync_group(self) -> int:
        return 0


_default_strategy = None
_default_mode_value = None
_default_lock = threading.Lock()


def _get_default_strategy() -> Strategy:
    global _default_strategy
    if _default_strategy is None:
        with _default_lock:
            if _default_strategy is None:
                s = Strategy.__new__(Strategy)
                Strategy.__init__(s, _DefaultExtended(s))
                _default_strategy = s
    return _default_strategy


def _default_mode() -> _Mode:
    global _default_mode_value
    if _default_mode_value is None:
        s = _get_default_strategy()
        _default_mode_value = _Mode(s, replica_context=_DefaultReplicaContext(s, 0))
    return _default_mode_value


def canonical_devices(devices: Sequence[str]) -> tuple:
    """`devices` as TF names local devices ('/cpu:1' -> '/replica:0/task:0/device:CPU:1').

    Raises:
      ValueError: an empty list, or a device given twice.
    """
    from tensorweave.framework import device_spec as _dev
    out = []
    for d in devices:
        spec = _dev.DeviceSpec.from_string(d if isinstance(d, str) else d.to_string())
        out.append(_dev.DeviceSpec(
            job=spec.job, replica=spec.replica if spec.replica is not None else 0,
            task=spec.task if spec.task is not None else 0,
            device_type=spec.device_type or "CPU",
            device_index=spec.device_index or 0).to_string())
    if not out:
        raise ValueError("Must specify at least one device.")
    if len(set(out)) != len(out):
        raise ValueError("No duplicates allowed in `devices` argument: %s" % (devices,))
    return tuple(out)
