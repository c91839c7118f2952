"""tf.Variable: resource variables in the session's resource manager.

A Variable is a VarHandleOp (the variable's name, e.g. 'v'), an initializer
(AssignVariableOp 'v/Assign' of the initial value), and reads (ReadVariableOp). Every
`value()` builds a new read, so a read inside `tf.control_dependencies` is ordered
after the dependencies; `sess.run(v)` fetches the read made at construction ('v/read'
for a variable made as a TF1 reference variable, 'v/Read/ReadVariableOp' for a resource
variable, TF's names). All tensorweave variables are resource variables, whatever
`use_resource` says; TF1's reference-variable dtypes (`float32_ref`) do not exist. What
`use_resource` changes is what a program sees of TF1's aliasing: feeding a variable made
as a TF1 reference variable (the default), or its read, feeds every plain read of it, as
feeding TF1's `float32_ref` tensor does, and a fetched read shows the run's updates
(runtime/late_reads.py); feeding a resource variable feeds only the read `sess.run(v)`
fetches (`_feed_components`).
"""
from __future__ import annotations

import contextlib
import enum
import inspect
from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
from tensorweave.framework.op_builder import convert_to_tensor, \
    register_tensor_conversion_function
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape
from tensorweave.ops.state import resource_variable_ops as rv
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing import indexing_gather, indexing_select
from tensorweave.ops.math import math_unary


@tf_export("VariableSynchronization")
class VariableSynchronization(enum.Enum):
    """When a distributed variable is aggregated (TF1 `tf.VariableSynchronization`)."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


@tf_export("VariableAggregation")
class VariableAggregation(enum.Enum):
    """How a distributed variable is aggregated (TF1 `tf.VariableAggregation`)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # TF1 alias


class VariableDef:
    """The fields of TF's VariableDef proto that name a variable's graph elements."""

    def __init__(self, variable_name="", initial_value_name="", initializer_name="",
                 snapshot_name="", trainable=True, is_resource=True,
                 save_slice_info_def=None):
        self.variable_name = variable_name
        self.initial_value_name = initial_value_name
        self.initializer_name = initializer_name
        self.snapshot_name = snapshot_name
        self.trainable = trainable
        self.is_resource = is_resource
        # a partition's place in its logical variable: the SaveSliceInfoDef fields
        # (full_name, full_shape, var_offset, var_shape) as a dict, or None
        self.save_slice_info_def = save_slice_info_def

    def __repr__(self):
        return "VariableDef(%s)" % ", ".join("%s=%r" % kv for kv in vars(self).items())


def _prepend_scope(name: str, import_scope: Optional[str]) -> str:
    return "%s/%s" % (import_scope, name) if import_scope else name


# Per-graph state lives ON the graph, never in a module-level map keyed by graph or op:
# a WeakKeyDictionary whose values reach their own key (a Variable reaches its graph)
# keeps every such graph alive for the life of the process.


def _creator_stack(g) -> list:
    """The creators of the enclosing `variable_creator_scope`s of `g`, outermost first."""
    stack = g.__dict__.get("_variable_creator_stack")
    if stack is None:
        stack = g._variable_creator_stack = []
    return stack


def _variables_of_handle_ops(g) -> dict:
    """VarHandleOp -> its Variable, for the variables of `g` (to find the variables an
    initial value reads)."""
    found = g.__dict__.get("_variable_of_handle_op")
    if found is None:
        found = g._variable_of_handle_op = {}
    return found


class _VariableMeta(type):
    """Routes `Variable(...)` through the active `variable_creator_scope` creators."""

    def __call__(cls, *args, **kwargs):
        stack = _graph.get_default_graph().__dict__.get("_variable_creator_stack")
        if cls is not Variable or not stack:
            return super().__call__(*args, **kwargs)
        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        bound.apply_defaults()
        params = dict(bound.arguments)
        params.pop("self")

        def getter(**kw):
            return type.__call__(cls, **kw)
        for creator in stack:
            getter = _chain(creator, getter)
        return getter(**params)


def _chain(creator, next_creator):
    def getter(**kwargs):
        return creator(next_creator, **kwargs)
    return getter


@tf_export("variable_creator_scope")
@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Routes Variable creation in the default graph through `variable_creator(
    next_creator, **kwargs)`, which may change the arguments and must call
    `next_creator(**kwargs)` (or return a Variable itself). Scopes nest; the innermost
    creator runs first."""
    g = _graph.get_default_graph()
    stack = _creator_stack(g)
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)


@tf_export("Variable")
class Variable(metaclass=_VariableMeta):
    """A variable: state that persists across `Session.run` calls (TF1 `tf.Variable`).

    Args:
      initial_value: a Tensor or value convertible to one, or a callable of no arguments
        returning one, that gives the variable its value when its initializer runs.
      trainable: add it to TRAINABLE_VARIABLES (default True; False for ON_READ
        synchronization) so optimizers update it.
      collections: graph collections to add it to (default [GLOBAL_VARIABLES]).
      validate_shape: if False, the initial value may have a partly unknown shape and
        assignments are not checked at run time; a TF1 reference variable's static shape
        is then unknown (or `shape`), a resource variable's stays the initial value's.
      caching_device: device of a cached copy returned by `value()`.
      name: the variable's name (made unique: 'v', 'v_1', ...).
      variable_def: a VariableDef naming existing graph elements to wrap.
      dtype: the dtype of the initial value (converted to it).
      expected_shape: ignored (deprecated in TF1).
      import_scope: prefix for the names in `variable_def`.
      constraint: a function applied to the variable after optimizer updates.
      use_resource: every tensorweave variable is a resource variable; unless True
        (or `tf.enable_resource_variables()` was called), feeding the variable replaces
        all its reads, as feeding a TF1 reference variable does.
      synchronization, aggregation: for distribution strategies (recorded only).
      shape: the variable's static shape (must be compatible with the initial value).

    Raises:
      ValueError: no initial value, shapes are incompatible, or (a TF1 reference variable
        with validate_shape) the initial value's shape is not fully defined.
    """

    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape: bool = True, caching_device=None, name: Optional[str] = None,
                 variable_def=None, dtype=None, expected_shape=None, import_scope=None,
                 constraint=None, use_resource=None,
                 synchronization=VariableSynchronization.AUTO,
                 aggregation=VariableAggregation.NONE, shape=None):
        self._save_slice_info = None
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_def(variable_def, import_scope)
            return
        synchronization, aggregation, trainable = _validate_sync_agg_trainable(
            synchronization, aggregation, trainable, name)
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError("collections argument to Variable constructor must be a list, "
                             "tuple, or set. Got %s of type %s" % (collections,
                                                                  type(collections)))
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        init_from_fn = callable(initial_value)
        g = _graph.get_default_graph() if init_from_fn else \
            _graph._graph_of([initial_value])
        self._trainable = bool(trainable)
        self._synchronization = synchronization
        self._aggregation = aggregation
        self._constraint = constraint
        self._caching_device = caching_device
        self._feeds_reads = not (_use_resource_default() if use_resource is None
                                 else use_resource)
        self._update_reads = set()  # reads made by assign(): they see the update
        with g.as_default(), _init_scope(g):
            with g.name_scope(name or "Variable") as scope:
                handle_name = scope[:-1]
                # TF1's names: a reference variable's given initial value is
                # "v/initial_value", an initializer function's output and a resource
                # variable's value are under "v/Initializer/"
                with contextlib.ExitStack() as stack:
                    if init_from_fn or not self._feeds_reads:
                        stack.enter_context(g.name_scope("Initializer"))
                    if init_from_fn:
                        # as TF: an initializer function's ops ignore the device scopes
                        # (replica_device_setter places the variable, not its initial
                        # value)
                        stack.enter_context(g.device(None))
                    value = initial_value() if init_from_fn else initial_value
                    if isinstance(value, Variable):
                        value = value.initialized_value()
                    value = convert_to_tensor(value, dtype=dtype, name="initial_value")
                self._initial_value = value
                self._shape = self._static_shape(value, shape, validate_shape)
                self._validate_shape = validate_shape
                self._dtype = value.dtype
                self._handle = rv.var_handle_op(self._dtype, self._shape,
                                                shared_name=handle_name, name=scope)
                if self._feeds_reads:  # travels with the graph: "v:0" fetches the value
                    self._handle.op._attrs[REF_VARIABLE_ATTR] = True
                # the variable's own ops go where its handle goes, whatever device
                # functions say (TF1 builds a variable's assign and read under
                # colocate_with(variable)): a device function that places only the
                # variables, like replica_device_setter, must not split them
                with g.name_scope("IsInitialized"), \
                        g.colocate_with(self._handle.op, ignore_existing=True):
                    self._is_initialized_op = rv.var_is_initialized_op(self._handle)
                with g.name_scope("Initializer"):
                    guarded = _guard_uninitialized_dependencies(value)
                with g.name_scope("Assign") as assign_scope, \
                        g.colocate_with(self._handle.op, ignore_existing=True):
                    # as TF: a reference variable's initializer is an Assign with its
                    # validate_shape, a resource variable's assigns without checks
                    self._initializer_op = rv.assign_variable_op(
                        self._handle, guarded,
                        validate_shape=validate_shape and self._feeds_reads,
                        name=assign_scope)
                # the read `sess.run(v)` fetches: TF1's "v/read" for a reference variable,
                # "v/Read/ReadVariableOp" for a resource variable, as TF names them
                with g.colocate_with(self._handle.op, ignore_existing=True):
                    if self._feeds_reads:
                        self._graph_element = rv.read_variable_op(self._handle, self._dtype,
                                                                  name="read")
                    else:
                        with g.name_scope("Read"):
                            self._graph_element = rv.read_variable_op(self._handle,
                                                                      self._dtype)
                self._cached_value = None
                if caching_device is not None:
                    from tensorweave.ops.control_flow import structure
                    with g.device(caching_device):
                        self._cached_value = structure.identity(self._graph_element)
        _variables_of_handle_ops(self._handle.op._graph)[self._handle.op] = self
        g.add_to_collections(collections, self)

    def _static_shape(self, value: Tensor, shape, validate_shape: bool) -> TensorShape:
        """The variable's static shape, from its initial value and `shape` argument, as TF
        has it. A resource variable takes the value's shape (or `shape`, which must be
        compatible), whatever `validate_shape` says. A TF1 reference variable with
        validate_shape needs an initial value of fully defined shape compatible with
        `shape`; without it its shape is `shape`, else unknown.

        Raises:
          ValueError: as above.
        """
        ref_style = self._feeds_reads
        if ref_style and validate_shape and not value.shape.is_fully_defined():
            raise ValueError("initial_value must have a shape specified: %s (a variable "
                             "made with use_resource=True, or validate_shape=False, may "
                             "have a partly unknown shape)" % value)
        if shape is None:
            return value.shape if validate_shape or not ref_style else unknown_shape()
        shape = as_shape(shape)
        if (validate_shape or not ref_style) and not value.shape.is_compatible_with(shape):
            raise ValueError("The initial value's shape (%s) is not compatible with the "
                             "explicitly supplied `shape` argument (%s)." % (value.shape, shape))
        return shape

    def _init_from_def(self, variable_def, import_scope) -> None:
        g = _graph.get_default_graph()

        def lookup(name):
            return g.as_graph_element(_prepend_scope(name, import_scope))
        self._handle = lookup(variable_def.variable_name)
        if not isinstance(self._handle, Tensor):
            self._handle = self._handle.outputs[0]
        self._initializer_op = lookup(variable_def.initializer_name) \
            if variable_def.initializer_name else None
        self._initial_value = lookup(variable_def.initial_value_name) \
            if variable_def.initial_value_name else None
        self._graph_element = lookup(variable_def.snapshot_name) \
            if variable_def.snapshot_name else rv.read_variable_op(
                self._handle, self._handle.op._get_attr("dtype"))
        self._dtype = self._handle.op._get_attr("dtype")
        self._shape = self._handle.op._get_attr("shape")
        self._validate_shape = True
        self._trainable = bool(getattr(variable_def, "trainable", True))
        self._synchronization = VariableSynchronization.AUTO
        self._aggregation = VariableAggregation.NONE
        self._constraint = None
        self._caching_device = None
        self._cached_value = None
        self._is_initialized_op = None
        # a TF1 reference variable: TF wrote it as one (is_resource false), or we did
        # (the handle's REF_VARIABLE_ATTR: our VariableDefs say is_resource so that
        # TensorFlow imports our VarHandleOps)
        self._feeds_reads = bool(self._handle.op._attrs.get(REF_VARIABLE_ATTR)) or \
            not getattr(variable_def, "is_resource", True)
        self._update_reads = set()
        slice_def = getattr(variable_def, "save_slice_info_def", None)
        if slice_def:  # a partition (TF writes the message only for partitions)
            self._save_slice_info = self.SaveSliceInfo(save_slice_info_def=slice_def,
                                                       import_scope=import_scope)
        _variables_of_handle_ops(g)[self._handle.op] = self

    # --- properties -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self) -> Operation:
        return self._handle.op

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def dtype(self) -> _dt.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Merges `shape` into the static shape (ValueError if incompatible)."""
        self._shape = self._shape.merge_with(as_shape(shape))

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def graph(self):
        return self._handle.graph

    @property
    def device(self) -> str:
        return self._handle.device

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def synchronization(self):
        return self._synchronization

    @property
    def aggregation(self):
        return self._aggregation

    @property
    def _shared_name(self) -> str:
        return self._handle.op._get_attr("shared_name")

    def _as_graph_element(self) -> Tensor:
        return self._graph_element

    def _feed_components(self) -> List[Tensor]:
        """The tensors a feed of this variable replaces (Session's feed protocol).

        A TF1 reference variable is one tensor that all its readers consume, so feeding
        it changes every read; here every plain read (ReadVariableOp of the handle, not
        one made by an update to return the new value) outside control flow is fed.
        """
        if not self._feeds_reads:
            return [self._graph_element]
        reads = [self._graph_element]
        for op in self._handle.consumers():
            if op.type == "ReadVariableOp" and op.outputs[0] is not self._graph_element \
                    and op.name not in self._update_reads \
                    and op._control_flow_context is None:
                reads.append(op.outputs[0])
        return reads

    def _split_feed(self, value) -> list:
        return [value] * len(self._feed_components())

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self._shape,
                                                        self._dtype.name)

    # --- reads ------------------------------------------------------------------------
    def value(self) -> Tensor:
        """A Tensor with the variable's current value (a new read each call)."""
        if self._cached_value is not None:
            return self._cached_value
        with _graph.colocate_with(self._handle.op, ignore_existing=True):
            read = rv.read_variable_op(self._handle, self._dtype)
        if self._feeds_reads:
            # as TF1's reference variable, whose consumers carry control dependencies
            read.graph._not_dominating(read.op)
        return read

    def read_value(self) -> Tensor:
        """Reads the variable's value now (a new read, ordered by control deps)."""
        with _graph.name_scope("Read"):
            return rv.read_variable_op(self._handle, self._dtype)

    def sparse_read(self, indices, name: Optional[str] = None) -> Tensor:
        """Rows `indices` of the variable (its gradient is an IndexedSlices)."""
        with _graph.name_scope("Gather" if name is None else name) as scope:
            return rv.resource_gather(self._handle, indices, self._dtype, name=scope)

    def gather_nd(self, indices, name: Optional[str] = None) -> Tensor:
        """`tf.gather_nd(self.value(), indices)`."""
        return indexing_gather.gather_nd(self.value(), indices, name=name)

    def initialized_value(self) -> Tensor:
        """The variable's value if initialized, else its initial value; for initializing
        one variable from another."""
        g = self.graph
        initial = self._initializer_op.inputs[1] if self._initializer_op is not None \
            else self._initial_value
        with g.as_default(), _init_scope(g):
            return rv.read_variable_or_default(self._handle, initial)

    def eval(self, session=None):
        """The variable's value in `session` (or the default session)."""
        return self._graph_element.eval(session=session)

    def load(self, value, session=None) -> None:
        """Sets the variable to `value` by running its initializer with the initial value
        fed (no new ops)."""
        from tensorweave.runtime.session import _run_using_default_session
        _run_using_default_session(self._initializer_op,
                                   {self._initializer_op.inputs[1]: value}, self.graph,
                                   session)

    def is_initialized(self, name: Optional[str] = None) -> Tensor:
        return rv.var_is_initialized_op(self._handle, name=name)

    # --- updates ----------------------------------------------------------------------
    def _lazy_read(self, update_op: Operation, name: Optional[str] = None) -> Tensor:
        """The value after `update_op`: a read ordered after it."""
        with _graph.control_dependencies([update_op]):
            read = rv.read_variable_op(self._handle, self._dtype, name=name)
        self._update_reads.add(read.op.name)
        return read

    def _updated(self, build, tf1_name: str, name: Optional[str], read_value: bool, value,
                 check=None, value_name: str = "value"):
        """The result of an update `build(value_tensor, name)` makes: the new value (a read
        after it) or, without `read_value`, the update op. `value` is converted to the
        variable's dtype (and given to `check`, which raises for a bad shape).

        For a TF1 reference variable names follow TF1's: the value is converted in the
        update's scope ("Assign/value", or `name`/`value_name`), and the new value carries
        the name TF1's update op has ("Assign", "AssignAdd", ... or `name`), so
        "myassign:0" is the value as in TF1 while the resource update is "<that>/update"
        (the names `ref_variables.to_resource_variables` gives imported updates); without
        `read_value` the update op itself has that name. A tensor of another dtype is a
        TypeError there, as TF1's op builder reports an input not matching the
        reference's type (a resource variable's conversion raises ValueError)."""
        if not self._feeds_reads:
            value = convert_to_tensor(value, dtype=self._dtype)
            if check is not None:
                check(value)
            op = build(value, name)
            return self._lazy_read(op) if read_value else op
        with _graph.name_scope(name or tf1_name) as scope:
            try:
                value = convert_to_tensor(value, dtype=self._dtype, name=value_name)
            except ValueError:
                if not isinstance(value, (Tensor, Variable)):
                    raise
                raise TypeError("Input '%s' of '%s' Op has type %s that does not match type "
                                "%s of argument 'ref'." % (value_name, tf1_name,
                                                           value.dtype.name,
                                                           self._dtype.name)) from None
            if check is not None:
                check(value)
            # TF1 places an op taking a reference input with the variable
            with self._handle.graph.colocate_with(self._handle.op):
                if not read_value:
                    return build(value, scope)
                op = build(value, "update")
        with self._handle.graph.colocate_with(self._handle.op):
            return self._lazy_read(op, name=scope)

    def _assign(self, value, validate_shape: bool, name, read_value: bool):
        """The assignment of `value`, with TF's shape rules: a resource variable ignores
        `validate_shape`: the value must fit its static shape, checked again at run time
        when that shape is fully defined and the variable was made with validate_shape. A
        TF1 reference variable checks only with `validate_shape`, at run time against its
        current shape, and its new value has the shape of `value` (TF1's Assign output)."""
        if self._feeds_reads:
            check_static = validate_at_run = validate_shape
        else:
            check_static = True
            validate_at_run = self._validate_shape and self._shape.is_fully_defined()
        values = []

        def check(value_tensor):
            values.append(value_tensor)
            if check_static and not self._shape.is_compatible_with(value_tensor.shape):
                raise ValueError("Cannot assign value to variable ' %s': Shape mismatch.The "
                                 "variable shape %s, and the assigned value shape %s are "
                                 "incompatible." % (self.name, self._shape,
                                                    value_tensor.shape))
        result = self._updated(lambda v, n: rv.assign_variable_op(
            self._handle, v, validate_shape=validate_at_run, name=n),
            "Assign", name, read_value, value, check)
        if self._feeds_reads and read_value:
            value_shape = values[0].shape
            result._shape = self._shape.merge_with(value_shape) if validate_shape \
                else value_shape
        return result

    def assign(self, value, use_locking=None, name: Optional[str] = None,
               read_value: bool = True):
        """Assigns `value` to the variable.

        Args:
          value: a Tensor (or convertible value) of the variable's dtype and shape.
          use_locking: accepted; resource updates are always atomic.
          name: name of the assign op.
          read_value: if True, return a Tensor with the new value (a read ordered after
            the assignment); else return the assign Operation.

        Raises:
          ValueError: `value`'s static shape is incompatible with the variable's.
        """
        return self._assign(value, True, name, read_value)

    def _update(self, builder, delta, name, read_value, tf1_name: str):
        def check(delta):
            if not self._shape.is_compatible_with(delta.shape):
                raise ValueError("Cannot update variable '%s' of shape %s with a value of "
                                 "shape %s" % (self.name, self._shape, delta.shape))
        return self._updated(lambda d, n: builder(self._handle, d, name=n), tf1_name, name,
                             read_value, delta, check)

    def assign_add(self, delta, use_locking=None, name: Optional[str] = None,
                   read_value: bool = True):
        """Adds `delta` to the variable, atomically (see `assign` for the result)."""
        return self._update(rv.assign_add_variable_op, delta, name, read_value, "AssignAdd")

    def assign_sub(self, delta, use_locking=None, name: Optional[str] = None,
                   read_value: bool = True):
        """Subtracts `delta` from the variable, atomically (see `assign`)."""
        return self._update(rv.assign_sub_variable_op, delta, name, read_value, "AssignSub")

    def _scatter(self, builder, sparse_delta, name, tf1_name: str):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError("sparse_delta is not IndexedSlices: %s" % (sparse_delta,))
        return self._updated(lambda v, n: builder(self._handle, sparse_delta.indices, v,
                                                  name=n), tf1_name, name, True,
                             sparse_delta.values, value_name="updates")

    def scatter_update(self, sparse_delta, use_locking: bool = False,
                       name: Optional[str] = None) -> Tensor:
        """Sets rows `sparse_delta.indices` to `sparse_delta.values`; returns the new
        value."""
        return self._scatter(rv.resource_scatter_update, sparse_delta, name, "ScatterUpdate")

    def scatter_add(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        """Adds an IndexedSlices to the variable; returns the new value."""
        return self._scatter(rv.resource_scatter_add, sparse_delta, name, "ScatterAdd")

    def scatter_sub(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        """Subtracts an IndexedSlices from the variable; returns the new value."""
        return self._scatter(rv.resource_scatter_sub, sparse_delta, name, "ScatterSub")

    def scatter_mul(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        return self._scatter(rv.resource_scatter_mul, sparse_delta, name, "ScatterMul")

    def scatter_div(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        return self._scatter(rv.resource_scatter_div, sparse_delta, name, "ScatterDiv")

    def scatter_min(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        return self._scatter(rv.resource_scatter_min, sparse_delta, name, "ScatterMin")

    def scatter_max(self, sparse_delta, use_locking: bool = False,
                    name: Optional[str] = None) -> Tensor:
        return self._scatter(rv.resource_scatter_max, sparse_delta, name, "ScatterMax")

    def _scatter_nd(self, builder, tf1_name: str, indices, updates, name,
                    use_locking: bool = True):
        return self._updated(lambda u, n: builder(self._handle, indices, u,
                                                  use_locking=use_locking, name=n),
                             tf1_name, name, True, updates, value_name="updates")

    def scatter_nd_update(self, indices, updates, name: Optional[str] = None) -> Tensor:
        """Sets the elements or slices at n-d `indices` to `updates`."""
        return self._scatter_nd(rv.resource_scatter_nd_update, "ScatterNdUpdate", indices,
                                updates, name)

    def scatter_nd_add(self, indices, updates, name: Optional[str] = None) -> Tensor:
        return self._scatter_nd(rv.resource_scatter_nd_add, "ScatterNdAdd", indices,
                                updates, name)

    def scatter_nd_sub(self, indices, updates, name: Optional[str] = None) -> Tensor:
        return self._scatter_nd(rv.resource_scatter_nd_sub, "ScatterNdSub", indices,
                                updates, name)

    def batch_scatter_update(self, sparse_delta, use_locking: bool = False,
                             name: Optional[str] = None) -> Tensor:
        """`tf.batch_scatter_update(self, sparse_delta.indices, sparse_delta.values)`: sets
        `self[i_1, ..., i_n, indices[i_1, ..., i_n, j]]`; returns the new value.

        Raises:
          TypeError: `sparse_delta` is not an IndexedSlices (a TF1 reference variable
            fails with AttributeError reading its `indices`, as TF1's does).
        """
        from tensorweave.ops.state import state_ops
        if not self._feeds_reads and not isinstance(sparse_delta, IndexedSlices):
            raise TypeError("Argument `sparse_delta` must be a `tf.IndexedSlices`. Received "
                            "arg: %s" % (sparse_delta,))
        return state_ops.batch_scatter_update(self, sparse_delta.indices, sparse_delta.values,
                                              use_locking=use_locking, name=name)

    def count_up_to(self, limit: int) -> Tensor:
        """Increments the (integer scalar) variable until `limit`; returns the value
        before the increment; OutOfRangeError once it reaches `limit`."""
        return rv.resource_count_up_to(self._handle, limit, T=self._dtype)

    # --- serialization ----------------------------------------------------------------
    def to_proto(self, export_scope: Optional[str] = None) -> Optional[VariableDef]:
        """A VariableDef naming this variable's graph elements (None if outside
        `export_scope`)."""
        def strip(name):
            if not export_scope:
                return name
            if not name.startswith(export_scope + "/"):
                return None
            return name[len(export_scope) + 1:]
        var_name = strip(self._handle.name)
        if var_name is None:
            return None
        return VariableDef(
            variable_name=var_name,
            initial_value_name=strip(self._initial_value.name)
            if self._initial_value is not None else "",
            initializer_name=strip(self._initializer_op.name)
            if self._initializer_op is not None else "",
            snapshot_name=strip(self._graph_element.name), trainable=self._trainable,
            save_slice_info_def=self._save_slice_info._to_def(export_scope)
            if self._save_slice_info is not None else None)

    @staticmethod
    def from_proto(variable_def, import_scope: Optional[str] = None) -> "Variable":
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def _get_save_slice_info(self):
        return self._save_slice_info

    def _set_save_slice_info(self, save_slice_info) -> None:
        self._save_slice_info = save_slice_info

    def experimental_ref(self):
        return self.ref()

    def ref(self):
        """A hashable reference to this variable (identity based)."""
        return _VariableRef(self)

    # --- Python protocol --------------------------------------------------------------
    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self):
        # TF1's reference variable is a plain Python object, so true (`if global_step:`);
        # a resource variable is as a Tensor is
        if self._feeds_reads:
            return True
        raise TypeError("Using a `tf.Variable` made with use_resource=True as a Python "
                        "`bool` is not allowed. Use `if v is not None:` to test whether a "
                        "variable is defined, and tf.cond to branch on its value.")

    def __reduce__(self):
        raise TypeError("Variable objects cannot be pickled")


def _variable_of_handle_op(op) -> Optional["Variable"]:
    found = op._graph.__dict__.get("_variable_of_handle_op")
    return found.get(op) if found else None


def variable_of_ref_tensor(t) -> Optional["Variable"]:
    """The variable made as a TF1 reference variable whose handle tensor is `t` (what
    TF1 names `v:0`, its `float32_ref` tensor), else None."""
    if not isinstance(t, Tensor) or t._op._type != "VarHandleOp":
        return None
    var = _variable_of_handle_op(t._op)
    return var if var is not None and var._feeds_reads else None


def _ref_variable_read(t) -> Optional[tuple]:
    """(read op, variable) when `t` is a ReadVariableOp's value of a variable made as
    a TF1 reference variable, else None."""
    if not isinstance(t, Tensor):
        return None
    op = t._op
    if op._type != "ReadVariableOp" or not op._inputs or \
            op._inputs[0]._op._type != "VarHandleOp":
        return None
    var = _variable_of_handle_op(op._inputs[0]._op)
    return (op, var) if var is not None and var._feeds_reads else None


def variable_updated_by(t) -> Optional["Variable"]:
    """The TF1 reference variable whose update `t` is the result of (the value after
    assign, assign_add, scatter_update, ...: TF1's reference output of the update op),
    else None."""
    read = _ref_variable_read(t)
    return read[1] if read is not None and read[0]._name in read[1]._update_reads \
        else None


def variable_fed_by(t) -> Optional["Variable"]:
    """The TF1 reference variable a feed of `t` stands for: `t` its handle tensor
    (`v:0`) or one of its plain reads (TF1's `v/read:0`, which every reader of a
    reference variable consumes), else None. Feeding such a tensor feeds all the
    variable's reads."""
    if isinstance(t, Tensor) and t._op._type == "ReadVariableOp":
        read = _ref_variable_read(t)
        if read is None:
            return None
        op, var = read
        plain = op._name not in var._update_reads and op._control_flow_context is None
        return var if plain else None
    return variable_of_ref_tensor(t)


def fetched_value_of_handle(op: Operation) -> Optional[Tensor]:
    """What fetching the output of the VarHandleOp `op` returns in TF1: the variable's
    value for a variable made as a TF1 reference variable (its handle tensor `v:0` is
    TF1's `float32_ref` tensor), None (the handle itself) for a resource variable."""
    var = _variable_of_handle_op(op)
    if var is not None:
        return var._graph_element if var._feeds_reads else None
    if not op._attrs.get(REF_VARIABLE_ATTR):
        return None
    # an imported graph without its Variable objects (import_graph_def): the snapshot
    # read TF1 names "W/read" (a resource variable's "W/Read/ReadVariableOp"), else a
    # plain read
    reads = [c for c in op._outputs[0].consumers() if c._type == "ReadVariableOp" and
             not c._control_inputs and c._control_flow_context is None]
    for want in (op._name + "/read", op._name + "/Read/ReadVariableOp"):
        for c in reads:
            if c._name == want:
                return c._outputs[0]
    return reads[0]._outputs[0] if reads else None


def _guard_uninitialized_dependencies(value: Tensor) -> Tensor:
    """`value` with every read of another Variable replaced by that variable's
    `initialized_value()` (TF1 does the same), so one initializer step initializes
    variables whose initial values read each other, in any order. The ops between the
    reads and `value` are copied; without such reads `value` is returned as is."""
    def variable_read(op):
        if op.type != "ReadVariableOp":
            return None
        return _variable_of_handle_op(op.inputs[0].op)

    needs = {}  # op -> whether it depends on a variable read
    order = []  # ops to copy, inputs first
    stack = [(value.op, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            needs[op] = variable_read(op) is not None or any(
                needs.get(t.op, False) for t in op.inputs)
            if needs[op]:
                order.append(op)
            continue
        if op in needs:
            continue
        needs[op] = False
        stack.append((op, True))
        if variable_read(op) is None:
            stack.extend((t.op, False) for t in op.inputs if t.op not in needs)
    if not order:
        return value
    g = value.graph
    copies = {}
    for op in order:
        var = variable_read(op)
        if var is not None:
            copies[op.outputs[0]] = var.initialized_value()
            continue
        new = g._create_op_raw(op.type, [copies.get(t, t) for t in op.inputs],
                               [t.dtype for t in op.outputs], dict(op._attrs), op.op_def,
                               op.name.rsplit("/", 1)[-1])
        new._add_control_inputs(op.control_inputs)
        for old_t, new_t in zip(op.outputs, new.outputs):
            new_t._shape = old_t.shape
            copies[old_t] = new_t
    return copies[value]


_USE_RESOURCE_DEFAULT = [False]  # TF1's default: variables act as reference variables


def _use_resource_default() -> bool:
    return _USE_RESOURCE_DEFAULT[0]


def _set_use_resource_default(value: bool) -> None:
    _USE_RESOURCE_DEFAULT[0] = bool(value)


class _VariableRef:
    __slots__ = ("_var",)

    def __init__(self, var):
        self._var = var

    def deref(self):
        return self._var

    def __hash__(self):
        return id(self._var)

    def __eq__(self, other):
        return isinstance(other, _VariableRef) and other._var is self._var


# Operators act on the current value: each delegates to the Tensor operator of the same
# name on `self.value()` (written once, by the math family). `==`/`!=` stay identity, as
# TF1 graph-mode Variables compare.
_DELEGATED_OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__invert__", "__and__",
    "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lt__", "__le__", "__gt__",
    "__ge__", "__getitem__", "__div__", "__rdiv__")


def _delegate(op_name: str):
    def method(self, *args):
        fn = getattr(Tensor, op_name, None)
        if fn is None:
            return NotImplemented
        return fn(self.value(), *args)
    method.__name__ = op_name
    return method


for _op_name in _DELEGATED_OPERATORS:
    setattr(Variable, _op_name, _delegate(_op_name))


def _variable_to_tensor(v, dtype=None, name=None, as_ref=False):
    if dtype is not None and not _dt.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError("Incompatible type conversion requested to type '%s' for variable "
                         "of type '%s'" % (_dt.as_dtype(dtype).name, v.dtype.name))
    if as_ref:
        return v.handle
    return v.value()


register_tensor_conversion_function(Variable, _variable_to_tensor)


class _init_scope:
    """Lifts variable creation out of control-dependency and control-flow contexts
    (TF1's `ops.init_scope` in graph mode)."""

    def __init__(self, g):
        self._g = g

    def __enter__(self):
        self._deps = self._g.control_dependencies(None)
        self._deps.__enter__()
        self._ctx = self._g._get_control_flow_context()
        self._g._set_control_flow_context(None)
        self._devs = self._g._device_functions_for_init()
        self._devs.__enter__()

    def __exit__(self, *exc):
        self._devs.__exit__(*exc)
        self._g._set_control_flow_context(self._ctx)
        self._deps.__exit__(*exc)
        return False


def _as_enum(enum_type, value, what: str, name):
    """`value` (a member, its value, or None for the default) as a member of
    `enum_type`; a ValueError naming the variable, as TF's, for anything else."""
    try:
        return enum_type(getattr(value, "value", value) if value is not None else 0)
    except ValueError:
        raise ValueError("Invalid variable %s mode: %s for variable: %s"
                         % (what, value, name)) from None


def _validate_sync_agg_trainable(synchronization, aggregation, trainable, name):
    synchronization = _as_enum(VariableSynchronization, synchronization, "synchronization",
                               name)
    aggregation = _as_enum(VariableAggregation, aggregation, "aggregation", name)
    if trainable is None:  # TF1 accepts an explicitly trainable ON_READ variable (TF2 not)
        trainable = synchronization is not VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


# --- collections --------------------------------------------------------------------------
@tf_export("global_variables")
def global_variables(scope: Optional[str] = None) -> List[Variable]:
    """The variables in GLOBAL_VARIABLES (names filtered by the regex `scope`)."""
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


@tf_export("all_variables")
def all_variables() -> List[Variable]:
    """Deprecated alias of `global_variables()`."""
    return global_variables()


@tf_export("trainable_variables")
def trainable_variables(scope: Optional[str] = None) -> List[Variable]:
    """The variables in TRAINABLE_VARIABLES (names filtered by the regex `scope`)."""
    return _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


@tf_export("local_variables")
def local_variables(scope: Optional[str] = None) -> List[Variable]:
    """The variables in LOCAL_VARIABLES (names filtered by the regex `scope`)."""
    return _graph.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


@tf_export("model_variables")
def model_variables(scope: Optional[str] = None) -> List[Variable]:
    """The variables in MODEL_VARIABLES (names filtered by the regex `scope`)."""
    return _graph.get_collection(GraphKeys.MODEL_VARIABLES, scope)


@tf_export("moving_average_variables")
def moving_average_variables(scope: Optional[str] = None) -> List[Variable]:
    """The variables in MOVING_AVERAGE_VARIABLES (names filtered by the regex `scope`)."""
    return _graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


# --- initializers -------------------------------------------------------------------------
@tf_export("variables_initializer", "initializers.variables")
def variables_initializer(var_list, name: str = "init") -> Operation:
    """An op that runs the initializers of `var_list` (a NoOp when it is empty)."""
    from tensorweave.ops.control_flow import structure
    if var_list:
        return structure.group(*[v.initializer for v in var_list], name=name)
    return structure.no_op(name=name)


@tf_export("initialize_variables")
def initialize_variables(var_list, name: str = "init") -> Operation:
    """Deprecated alias of `variables_initializer`."""
    return variables_initializer(var_list, name=name)


@tf_export("global_variables_initializer", "initializers.global_variables")
def global_variables_initializer() -> Operation:
    """An op that initializes all global variables (TF1 `tf.global_variables_initializer`)."""
    return variables_initializer(global_variables())


@tf_export("initialize_all_variables")
def initialize_all_variables() -> Operation:
    """Deprecated alias of `global_variables_initializer`."""
    return global_variables_initializer()


@tf_export("local_variables_initializer", "initializers.local_variables")
def local_variables_initializer() -> Operation:
    """An op that initializes all local variables."""
    return variables_initializer(local_variables())


@tf_export("initialize_local_variables")
def initialize_local_variables() -> Operation:
    """Deprecated alias of `local_variables_initializer`."""
    return local_variables_initializer()


@tf_export("tables_initializer", "initializers.tables_initializer")
def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op that runs every initializer in GraphKeys.TABLE_INITIALIZERS (TF1
    `tf.tables_initializer`); a NoOp when there are none, as in TF1.

    Args:
      name: the op's name.

    Returns:
      An Operation.
    """
    from tensorweave.ops.control_flow.structure import group, no_op
    inits = _graph.get_collection(_graph.GraphKeys.TABLE_INITIALIZERS)
    return group(*inits, name=name) if inits else no_op(name=name)


@tf_export("initialize_all_tables")
def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """Deprecated alias of `tables_initializer`."""
    return tables_initializer(name)


@tf_export("is_variable_initialized")
def is_variable_initialized(variable, name: Optional[str] = None) -> Tensor:
    """A scalar bool Tensor: whether `variable` is initialized."""
    return rv.var_is_initialized_op(rv._as_handle(variable), name=name)


@tf_export("assert_variables_initialized")
def assert_variables_initialized(var_list=None):
    """A tensor whose evaluation fails with FailedPreconditionError if a variable of
    `var_list` (default: global and local variables) is uninitialized; None if there
    are no variables."""
    from tensorweave.ops.control_flow import structure
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with _graph.colocate_with(var.op):
            read = var.read_value()
            # the rank may be known statically: the read must still run (and fail)
            with _graph.control_dependencies([read]):
                ranks.append(structure.identity(array_ops.rank(read)))
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


@tf_export("report_uninitialized_variables")
def report_uninitialized_variables(var_list=None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string Tensor with the names of the uninitialized variables of `var_list`
    (default: global and local variables); empty when all are initialized."""
    from tensorweave.ops.array.constant_op import constant
    if var_list is None:
        var_list = global_variables() + local_variables()
    with _graph.name_scope(name):
        init_vars = [is_variable_initialized(v) for v in var_list]
        with _graph.device("/cpu:0"):
            if not var_list:
                return constant([], dtype=_dt.string)
            mask = math_unary.logical_not(array_ops.stack(init_vars))
            names = constant([v.op.name for v in var_list])
            return indexing_select.boolean_mask(names, mask)

