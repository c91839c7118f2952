"""Values with one component per replica: PerReplica (replicas differ), Mirrored (equal
by construction) and MirroredVariable (one variable copy per device, kept equal by
identical updates), plus the helpers that split and regroup them."""
from __future__ import annotations

from typing import Any, Sequence

from tensorweave.distribute import distribute_lib as _lib
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.op_builder import register_tensor_conversion_function
from tensorweave.ops.state.variables import Variable


class DistributedValues:
    """A value with one component per replica.

    Args:
      values: the components, in replica order.
    """

    def __init__(self, values: Sequence[Any]):
        self._values = tuple(values)

    @property
    def values(self) -> tuple:
        return self._values

    @property
    def _devices(self) -> tuple:
        return tuple(getattr(v, "device", "") for v in self._values)

    def _get(self):
        """The component of the current replica (the first in cross-replica context)."""
        return self._values[_current_index(self)]

    def __repr__(self):
        body = ",\n".join("  %d: %r" % (i, v) for i, v in enumerate(self._values))
        return "%s:{\n%s\n}" % (type(self).__name__, body)


class PerReplica(DistributedValues):
    """Components that may differ between replicas (inputs, losses, gradients)."""


class Mirrored(DistributedValues):
    """Components that are equal on every replica (all-reduced values)."""

    def _as_graph_element(self):
        # fetching a Mirrored value fetches the current replica's component
        return self._get()


def _current_index(value) -> int:
    """Which component of `value` the code being built sees: the copy being updated
    (in `extended.update`), this replica's (in its replica context), else the first."""
    i = _lib._update_replica_id()
    if i is None:
        rc = _lib.get_replica_context()
        strategy = getattr(value, "_distribute_strategy", None)
        if rc is None or (strategy is not None and rc.strategy is not strategy):
            return 0
        i = rc._replica_id
    return i if i < len(value.values) else 0


def _mirrored_to_tensor(v, dtype=None, name=None, as_ref=False):
    from tensorweave.framework.op_builder import convert_to_tensor
    return convert_to_tensor(v._get(), dtype=dtype, name=name)


register_tensor_conversion_function(Mirrored, _mirrored_to_tensor)


# --- mirrored variables -------------------------------------------------------------------
def _delegated(field: str):
    return property(lambda self: getattr(self._get(), field))


class MirroredVariable(DistributedValues, Variable):
    """A variable with a copy on each device of its strategy, kept equal: every read is
    of the copy of the current replica (the first in cross-replica context); updates in
    cross-replica context change every copy.

    Being a `tf.Variable`, it goes wherever one goes (optimizers, initializers,
    collections); Variable's own methods act on the copy `_get()` picks, through the
    delegated fields below.

    Args:
      strategy: the strategy that made it.
      values: the copies, one per device, the first the primary.
      aggregation: how replica-context updates combine (a VariableAggregation).
    """

    def __init__(self, strategy, values: Sequence[Variable], aggregation):
        DistributedValues.__init__(self, values)
        self._distribute_strategy = strategy
        self._mirrored_aggregation = aggregation
        for v in values:
            v._distributed_container = self

    # the fields Variable's methods read, taken from the current copy
    _handle = _delegated("_handle")
    _dtype = _delegated("_dtype")
    _shape = _delegated("_shape")
    _feeds_reads = _delegated("_feeds_reads")
    _cached_value = _delegated("_cached_value")
    _graph_element = _delegated("_graph_element")
    _update_reads = _delegated("_update_reads")
    _validate_shape = _delegated("_validate_shape")
    _is_initialized_op = _delegated("_is_initialized_op")
    _initial_value = _delegated("_initial_value")
    _trainable = _delegated("_trainable")
    _constraint = _delegated("_constraint")
    _synchronization = _delegated("_synchronization")
    _caching_device = _delegated("_caching_device")
    _save_slice_info = None

    @property
    def _distributed_container(self):
        return self

    @property
    def _mirrored_copies(self) -> tuple:
        """Every copy (what Saver restores)."""
        return self._values

    @property
    def primary(self) -> Variable:
        return self._values[0]

    @property
    def name(self) -> str:
        return self._values[0].name

    @property
    def _aggregation(self):
        return self._mirrored_aggregation

    _initializer_op = _delegated("_initializer_op")

    @property
    def initializer(self):
        """One op running every copy's initializer."""
        cached = self.__dict__.get("_grouped_initializer")
        if cached is None:
            from tensorweave.ops.control_flow import structure
            ops = [v.initializer for v in self._values]
            g = ops[0].graph
            with g.as_default(), g.name_scope(None), g.control_dependencies(None):
                cached = structure.group(*ops, name=self._values[0].op.name +
                                         "/initializer_group")
            self.__dict__["_grouped_initializer"] = cached
        return cached

    def __repr__(self):
        body = ",\n".join("  %d: %r" % (i, v) for i, v in enumerate(self._values))
        return "MirroredVariable:{\n%s\n}" % body

    def _get_on_device_or_primary(self) -> Variable:
        return self._get()

    # --- updates: every copy in cross-replica context -----------------------------------
    def _on_all_copies(self, method: str, *args, **kwargs):
        if not _lib.in_cross_replica_context() or _lib._update_replica_id() is not None:
            return getattr(self._get(), method)(*args, **kwargs)
        ext = self._distribute_strategy.extended
        read_value = kwargs.get("read_value", True)
        results = ext.update(self, lambda v, *a: getattr(v, method)(*a, **kwargs),
                             args=args, group=False)
        from tensorweave.ops.control_flow import structure
        everything = structure.group(*results)
        if read_value is False:
            return everything
        # each copy's new value, available only once every copy is updated, so that
        # fetching one of them updates them all (as TF)
        g = everything.graph
        with_deps = []
        for r in results:
            with g.device(r.device), g.control_dependencies([everything]):
                with_deps.append(structure.identity(r))
        return Mirrored(with_deps)

    def _in_replica_update(self, method: str, value, kwargs):
        """An update in replica context: as TF, it needs an aggregation (how the
        replicas' values combine) and then updates every copy with the combined value."""
        from tensorweave.ops.state.variables import VariableAggregation
        agg = self._mirrored_aggregation
        if agg == VariableAggregation.NONE:
            raise ValueError("You must specify an aggregation method to update a "
                             "MirroredVariable in Replica Context. You can do so by "
                             "passing an explicit value for argument `aggregation` to "
                             "tf.Variable(..). e.g. `tf.Variable(..., aggregation=tf."
                             "VariableAggregation.SUM)`")

        def merge(strategy, per_replica):
            if agg == VariableAggregation.ONLY_FIRST_REPLICA:
                v = per_replica.values[0] if isinstance(per_replica, PerReplica) \
                    else per_replica
                reduced = Mirrored([v] * len(self._values))
            else:
                reduced = strategy.extended.reduce_to(
                    _lib.ReduceOp.from_variable_aggregation(agg), per_replica, self)
            return self._on_all_copies(method, reduced, **kwargs)
        return _lib.get_replica_context().merge_call(merge, args=(value,))

    def _update_method(method: str):
        def update(self, value, use_locking=None, name=None, read_value=True):
            kwargs = {"name": name, "read_value": read_value}
            if _lib.get_replica_context() is not None and \
                    _lib._update_replica_id() is None and \
                    _lib.get_replica_context().strategy is self._distribute_strategy:
                return self._in_replica_update(method, value, kwargs)
            return self._on_all_copies(method, value, **kwargs)
        update.__name__ = method
        return update

    assign = _update_method("assign")
    assign_add = _update_method("assign_add")
    assign_sub = _update_method("assign_sub")
    del _update_method


class SyncOnReadVariable(MirroredVariable):
    """A variable with a copy per device that each replica updates on its own (what
    `synchronization=ON_READ` with `aggregation=SUM` asks for: TF1's metric
    accumulators): in replica context reads and updates are of the replica's copy; in
    cross-replica context a read is the sum of the copies, and `assign` gives every copy
    value / num_replicas so that the sum is `value` (as TF).
    """

    def _reads_all_copies(self) -> bool:
        return _lib.in_cross_replica_context() and _lib._update_replica_id() is None

    def _summed(self):
        from tensorweave.ops.math import math_ops
        from tensorweave.ops.control_flow import structure
        reads = [Variable.value(c) for c in self._values]
        return structure.identity(reads[0]) if len(reads) == 1 else math_ops.add_n(reads)

    def value(self):
        return self._summed() if self._reads_all_copies() else self._get().value()

    def read_value(self):
        return self._summed() if self._reads_all_copies() else self._get().read_value()

    def _as_graph_element(self):
        return self._summed() if self._reads_all_copies() else self._get()._graph_element

    def __repr__(self):
        body = ",\n".join("  %d: %r" % (i, v) for i, v in enumerate(self._values))
        return "SyncOnReadVariable:{\n%s\n}" % body

    def _local_or_all(method: str):
        def update(self, value, use_locking=None, name=None, read_value=True):
            if not self._reads_all_copies():
                return getattr(self._get(), method)(value, use_locking=use_locking,
                                                    name=name, read_value=read_value)
            if method != "assign":
                raise ValueError("SyncOnReadVariable does not support `%s` in cross-replica "
                                 "context when aggregation is set to "
                                 "`tf.VariableAggregation.SUM`." % method)
            from tensorweave.framework.op_builder import convert_to_tensor
            from tensorweave.ops.math import math_binary, math_ops
            share = math_ops.cast(math_binary.truediv(
                convert_to_tensor(value), len(self._values)), self.dtype)
            return self._on_all_copies("assign", share, name=name, read_value=read_value)
        update.__name__ = method
        return update

    assign = _local_or_all("assign")
    assign_add = _local_or_all("assign_add")
    assign_sub = _local_or_all("assign_sub")
    del _local_or_all


def _is_mirrored_var(v) -> bool:
    return isinstance(v, MirroredVariable)


def make_mirrored_variable(strategy, devices: Sequence[str], next_creator, kwargs: dict):
    """Creates one copy of a variable per device (the first the primary; the others
    initialized from the primary's initial value, so all start equal) and returns the
    MirroredVariable that stands for them in the requested collections."""
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.state.variables import VariableAggregation, VariableSynchronization
    g = _graph.get_default_graph()
    collections = kwargs.get("collections")
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    collections = list(collections)
    trainable = kwargs.get("trainable")
    kwargs = dict(kwargs, collections=[], use_resource=True)
    copies = []
    for i, device in enumerate(devices):
        kw = dict(kwargs)
        if i > 0:
            primary = copies[0]

            def initial_value(primary=primary, device=device):
                # the primary's initial value, copied: every copy starts equal even
                # when the initializer is random
                with g.device(device):
                    return structure.identity(primary.initial_value)
            kw["initial_value"] = initial_value
            kw["name"] = "%s/replica_%d/" % (primary.op.name, i)
        # a slot or non-slot variable is made colocated with its primary; each copy is
        # placed on its own device instead
        with g.colocate_with(None, ignore_existing=True), g.device(device):
            copies.append(next_creator(**kw))
    trainable = copies[0].trainable if trainable is None else trainable
    train_list = g.get_collection_ref(GraphKeys.TRAINABLE_VARIABLES)
    for c in copies:
        for i, t in enumerate(train_list):
            if t is c:
                del train_list[i]
                break
    aggregation = kwargs.get("aggregation") or VariableAggregation.NONE
    # an ON_READ variable with SUM aggregation keeps per-replica values summed on read;
    # other ON_READ ones (batch norm's moving MEANs) stay mirrored: their updates are
    # linear, so the mean of per-replica copies that TF reads equals the mirrored value
    sync_on_read = kwargs.get("synchronization") == VariableSynchronization.ON_READ and \
        aggregation == VariableAggregation.SUM
    mv = (SyncOnReadVariable if sync_on_read else MirroredVariable)(
        strategy, copies, aggregation)
    if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    g.add_to_collections(collections, mv)
    return mv


# --- splitting and regrouping -------------------------------------------------------------
def select_replica(i: int, structure):
    """`structure` with each distributed value replaced by its component `i`
    (a MirroredVariable is kept whole: it picks its copy by context)."""
    def pick(x):
        if isinstance(x, DistributedValues) and not isinstance(x, MirroredVariable):
            return x.values[i]
        return x
    return nest.map_structure(pick, structure)


def regroup(per_replica: list, wrap=PerReplica):
    """The results of the replicas, combined: the same object where every replica gave
    the same one, nested structures elementwise, else a `wrap` value of the
    components."""
    first = per_replica[0]
    if all(v is first for v in per_replica):
        return first
    if isinstance(first, (list, tuple)) and all(
            type(v) is type(first) and len(v) == len(first) for v in per_replica):
        items = [regroup([v[k] for v in per_replica], wrap) for k in range(len(first))]
        if hasattr(first, "_make"):  # a namedtuple, rebuilt without its checks (as TF)
            return first._make(items)
        return type(first)(items)
    if isinstance(first, dict) and all(
            isinstance(v, dict) and set(v) == set(first) for v in per_replica):
        return type(first)((k, regroup([v[k] for v in per_replica], wrap))
                           for k in first)
    return wrap(per_replica)


def local_results(value) -> tuple:
    """The components of `value` (a 1-tuple for a plain value)."""
    if isinstance(value, DistributedValues):
        return value.values
    return (value,)


def reduce_non_distributed(reduce_op, value, destinations, num_replicas: int):
    """Reducing a value every replica has the same of: MEAN is the value; SUM of it
    over several replicas is refused, as in TF (the intent is ambiguous).

    Raises:
      ValueError: SUM of a plain value over several replicas.
    """
    if reduce_op == _lib.ReduceOp.MEAN or num_replicas == 1:
        return value
    raise ValueError("A non-DistributedValues value %s cannot be reduced with the given "
                     "reduce op %s." % (value, reduce_op))


def reduce_along_axis(strategy, reduce_op, value, axis: int, destination: str):
    """`strategy.reduce(op, value, axis)`: each replica reduces `axis` of its
    component on its device, then the replicas are summed; MEAN divides by the total
    count of elements along `axis` (replicas may hold different numbers)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    ext = strategy.extended
    comps = local_results(value)
    devices = ext.worker_devices
    g = _graph.get_default_graph()
    sums, counts = [], []
    for i, c in enumerate(comps):
        with g.device(devices[i] if i < len(devices) else ""):
            sums.append(reduction_ops.reduce_sum(c, axis=axis))
            if reduce_op == _lib.ReduceOp.MEAN:
                counts.append(math_ops.cast(array_ops.shape(c)[axis], c.dtype))
    if len(comps) == 1 and not isinstance(value, DistributedValues):
        total = sums[0]
        if reduce_op == _lib.ReduceOp.MEAN:
            return math_binary.truediv(total, counts[0])
        return total
    total = ext.reduce_to(_lib.ReduceOp.SUM, PerReplica(sums), destination)
    if reduce_op == _lib.ReduceOp.SUM:
        return total
    count = ext.reduce_to(_lib.ReduceOp.SUM, PerReplica(counts), destination)
    return math_binary.truediv(total, count)
