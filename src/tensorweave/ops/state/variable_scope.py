"""get_variable and variable_scope (TF1's variable sharing).

Each graph has a variable store (full name -> Variable made by get_variable) and a
variable-scope store (the current VariableScope, and how often each scope name was
opened, for unique default names). Variable names depend only on variable scopes;
`variable_scope('a')` also opens the name scope 'a/' (made unique, 'a_1/', when entered
again) for the other ops created inside, as TF1 does.
"""
from __future__ import annotations

import enum
import functools
import inspect
from typing import Dict

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import as_shape
from tensorweave.ops.state import init_ops
from tensorweave.ops.state import partitioned_variables as _partitioned
from tensorweave.ops.state import variables as _variables


class _ReuseMode(enum.Enum):
    """Mode for variable access within a variable scope."""
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
export(AUTO_REUSE, "AUTO_REUSE")


@tf_export("enable_resource_variables")
def enable_resource_variables() -> None:
    """Makes variables created without `use_resource` behave as TF1 resource variables.

    Every tensorweave variable is a resource variable; the one visible difference is
    feeding: feeding a reference variable replaces all its reads, feeding a resource
    variable only the read `sess.run(v)` fetches.
    """
    _variables._set_use_resource_default(True)


@tf_export("disable_resource_variables")
def disable_resource_variables() -> None:
    """Makes variables created without `use_resource` behave as TF1 reference variables
    (the TF1 default): feeding one replaces all its reads."""
    _variables._set_use_resource_default(False)


@tf_export("resource_variables_enabled")
def resource_variables_enabled() -> bool:
    """Whether variables created without `use_resource` act as resource variables."""
    return _variables._use_resource_default()


@tf_export("no_regularizer")
def no_regularizer(_):
    """Use this function to prevent regularization of variables."""
    return None


class _VariableStore:
    """full name -> Variable created by get_variable, for one graph."""

    def __init__(self):
        self._vars: Dict[str, _variables.Variable] = {}
        self._partitioned_vars: Dict[str, _partitioned.PartitionedVariable] = {}

    def get_variable(self, name, shape=None, dtype=_dt.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=_variables.VariableSynchronization.AUTO,
                     aggregation=_variables.VariableAggregation.NONE):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError("Passed a custom_getter which is not callable: %s" % custom_getter)
        if dtype is not None:
            dtype = _dt.as_dtype(dtype).base_dtype

        def _true_getter(name, shape=None, dtype=_dt.float32, initializer=None,
                         regularizer=None, reuse=None, trainable=None, collections=None,
                         caching_device=None, partitioner=None, validate_shape=True,
                         use_resource=None, constraint=None,
                         synchronization=_variables.VariableSynchronization.AUTO,
                         aggregation=_variables.VariableAggregation.NONE):
            is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
            partitioned_kwargs = dict(
                name=name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, use_resource=use_resource,
                constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)
            if partitioner is not None and not is_scalar:
                if not callable(partitioner):
                    raise ValueError("Partitioner must be callable, but received: %s"
                                     % (partitioner,))
                with _graph.name_scope(None):
                    return _partitioned.get_partitioned_variable(
                        self, partitioner=partitioner, **partitioned_kwargs)
            if reuse is True and partitioner is None and name in self._partitioned_vars:
                # reusing a partitioned variable needs no partitioner (TF1)
                return _partitioned.get_partitioned_variable(self, partitioner=None,
                                                             **partitioned_kwargs)
            return self._get_single_variable(
                name=name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, constraint=constraint,
                synchronization=synchronization, aggregation=aggregation,
                use_resource=use_resource)

        synchronization, aggregation, trainable = _variables._validate_sync_agg_trainable(
            synchronization, aggregation, trainable, name)
        kwargs = dict(name=name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, reuse=reuse, trainable=trainable,
                      collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape,
                      use_resource=use_resource, synchronization=synchronization,
                      aggregation=aggregation)
        if custom_getter is None:
            return _true_getter(constraint=constraint, **kwargs)
        if _accepts(custom_getter, "constraint"):
            kwargs["constraint"] = constraint
        return custom_getter(getter=_true_getter, **kwargs)

    def _get_single_variable(self, name, shape=None, dtype=_dt.float32, initializer=None,
                             regularizer=None, reuse=None, trainable=None, collections=None,
                             caching_device=None, validate_shape=True, constraint=None,
                             synchronization=None, aggregation=None, use_resource=None,
                             partition_info=None):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = _dt.as_dtype(dtype)
        given_shape = None if shape is None else as_shape(shape)
        shape = as_shape(shape)
        if name in self._vars:
            found = self._vars[name]
            if reuse is False or reuse is None:
                loc = found.op.traceback_location
                raise ValueError(
                    "Variable %s already exists, disallowed. Did you mean to set reuse=True "
                    "or reuse=tf.AUTO_REUSE in VarScope? Originally defined at:\n\n  %s"
                    % (name, "%s:%d" % loc if loc else "<unknown>"))
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError("Trying to share variable %s, but specified shape %s and "
                                 "found shape %s." % (name, shape, found.get_shape()))
            if dtype and not dtype.is_compatible_with(found.dtype):
                raise ValueError("Trying to share variable %s, but specified dtype %s and "
                                 "found dtype %s." % (name, dtype.name, found.dtype.name))
            return found
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?" % name)
        if initializer is None:
            if shape.ndims is None and not initializing_from_value:
                raise ValueError("Variable %s did not get an initializer, so its `shape` "
                                 "argument must be specified." % name)
            initializer = _default_initializer(name, dtype)
        if initializing_from_value:
            init_val, variable_dtype = initializer, None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                init_val = functools.partial(initializer, shape.as_list(), dtype=dtype)
                # as TF: partition_info (None without a partitioner) goes to initializers
                # that name it in their signature, and only to those
                if _takes_partition_info(initializer):
                    init_val = functools.partial(init_val, partition_info=partition_info)
                variable_dtype = dtype.base_dtype
            elif _needs_no_arguments(initializer):
                init_val, variable_dtype = initializer, None
            else:
                raise ValueError(
                    "The initializer passed is not valid. It should be a callable with no "
                    "arguments and the shape should not be provided or an instance of "
                    "`tf.keras.initializers.*' and `shape` should be fully defined.")
        # the given shape is the variable's, as in TF: the initial value must fit it
        # (ValueError), and it stays the static shape with validate_shape=False
        v = _variables.Variable(initial_value=init_val, name=name, trainable=trainable,
                                collections=collections, caching_device=caching_device,
                                dtype=variable_dtype, validate_shape=validate_shape,
                                constraint=constraint, synchronization=synchronization,
                                aggregation=aggregation, use_resource=use_resource,
                                shape=given_shape)
        self._vars[name] = v
        if regularizer:
            # lifted out of any cond or while loop the variable is made in (TF's
            # init_scope), so the loss can be fetched and minimized
            from tensorweave.framework.framework_lib import init_scope
            with init_scope(), _graph.colocate_with(v.op), \
                    _graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return init_ops.GlorotUniform()
    if dtype.is_integer or dtype.is_bool or dtype is _dt.string:
        return init_ops.Zeros()
    raise ValueError("An initializer for variable %s of %s is required" % (name, dtype))


def _needs_no_arguments(fn) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or
               p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values())


def _takes_partition_info(initializer) -> bool:
    """Whether `initializer`'s signature has a `partition_info` parameter that can be
    passed by keyword (TF: `"partition_info" in getargspec(initializer).args`)."""
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        return False
    param = params.get("partition_info")
    return param is not None and param.kind is param.POSITIONAL_OR_KEYWORD


def _accepts(fn, arg: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == arg or p.kind is p.VAR_KEYWORD for p in params)


@tf_export("VariableScope")
class VariableScope:
    """Defaults for `get_variable` inside a `variable_scope` (TF1 `tf.VariableScope`).

    Args:
      reuse: True, None/False, or AUTO_REUSE.
      name: the scope's full name ('' for the root).
      initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
      use_resource, constraint: defaults for the variables created in the scope.
      name_scope: the name scope opened when the scope was created ('a/').
    """

    def __init__(self, reuse, name: str = "", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 name_scope: str = "", dtype=_dt.float32, use_resource=None,
                 constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """Sets reuse to True: get_variable returns existing variables from now on."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype) -> None:
        self._dtype = dtype

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list:
        """The items of collection `name` whose names start with this scope's name."""
        scope = self._name + "/" if self._name else ""
        return _graph.get_collection(name, scope)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=_variables.VariableSynchronization.AUTO,
                     aggregation=_variables.VariableAggregation.NONE):
        """Gets an existing variable or creates a new one, with this scope's defaults."""
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if reuse is None:
            reuse = self._reuse
        if use_resource is None:
            use_resource = self._use_resource
        full_name = self._name + "/" + name if self._name else name
        # Variable names depend only on variable scopes: reset the name scope.
        with _graph.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype.base_dtype
                if init_dtype is not _dt.as_dtype(dtype):
                    raise ValueError("Initializer type '%s' and explicit dtype '%s' don't "
                                     "match." % (init_dtype, _dt.as_dtype(dtype)))
            if initializer is None:
                initializer = self._initializer
            if constraint is None:
                constraint = self._constraint
            if dtype is None:
                dtype = self._dtype
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, custom_getter=custom_getter,
                constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)


class _ScopeStore:
    """The current VariableScope of a graph and how often each scope name was opened."""

    def __init__(self):
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: Dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = \
            self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str) -> None:
        prefix = scope_name + "/"
        for k in self.variable_scopes_count:
            if k.startswith(prefix):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _stores(g=None):
    """The (variable store, scope store) of graph `g` (default: the default graph). They
    live on the graph itself: a module-level map keyed by graph would keep every graph
    with a variable alive forever, since the stored variables reach their graph."""
    g = g if g is not None else _graph.get_default_graph()
    s = g.__dict__.get("_variable_stores")
    if s is None:
        s = g._variable_stores = (_VariableStore(), _ScopeStore())
    return s


def _get_default_variable_store() -> _VariableStore:
    return _stores()[0]


@tf_export("get_variable_scope")
def get_variable_scope() -> VariableScope:
    """The current VariableScope of the default graph."""
    return _stores()[1].current_scope


@tf_export("get_variable")
def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=_variables.VariableSynchronization.AUTO,
                 aggregation=_variables.VariableAggregation.NONE):
    """Gets an existing variable with these parameters or creates a new one (TF1).

    The variable's name is the current variable scope's name + '/' + `name`. With
    reuse=True in the scope it must exist; with reuse unset it must not; AUTO_REUSE
    creates it if needed.

    Args:
      name: the variable's name within the scope.
      shape: its shape (must be fully defined unless `initializer` is a value or a
        callable of no arguments).
      dtype: its dtype (default: the scope's, float32).
      initializer: an initializer object, a callable of no arguments, or a value/Tensor
        (then `shape` must be None). Default: the scope's, else glorot_uniform for
        floats and zeros for integers, bools and strings.
      regularizer: fn(Variable) -> loss Tensor, added to REGULARIZATION_LOSSES.
      trainable: add it to TRAINABLE_VARIABLES (default True).
      collections: its collections (default [GLOBAL_VARIABLES]).
      caching_device, validate_shape, constraint, synchronization, aggregation: as for
        `tf.Variable`.
      partitioner: fn(shape, dtype) -> partition counts (see
        `tf.fixed_size_partitioner`): the variable is made of shards "<name>/part_<i>"
        and a PartitionedVariable is returned (a scalar is never partitioned).
      use_resource: all variables are resource variables; if not True, feeding the
        variable replaces its reads as feeding a TF1 reference variable does.
      custom_getter: fn(getter, name, *args, **kwargs) wrapping the creation.

    Returns:
      The Variable (a PartitionedVariable when partitioned).

    Raises:
      ValueError: creating an existing variable without reuse, reusing one that does
        not exist, or a shape/dtype mismatch on reuse.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype,
        initializer=initializer, regularizer=regularizer, trainable=trainable,
        collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint,
        synchronization=synchronization, aggregation=aggregation)


@tf_export("get_local_variable")
def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None,
                       partitioner=None, validate_shape=True, use_resource=None,
                       custom_getter=None, constraint=None,
                       synchronization=_variables.VariableSynchronization.AUTO,
                       aggregation=_variables.VariableAggregation.NONE):
    """`get_variable` for a non-trainable variable in LOCAL_VARIABLES."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=collections,
                        caching_device=caching_device, partitioner=partitioner,
                        validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint,
                        synchronization=synchronization, aggregation=aggregation)


def _wrap_custom_getter(custom_getter, old_getter):
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)
    return wrapped_custom_getter


def _get_unique_variable_scope(prefix: str) -> str:
    store = _stores()[1]
    cur = store.current_scope
    name = cur.name + "/" + prefix if cur.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(name + "_%d" % idx) > 0:
        idx += 1
    return prefix + "_%d" % idx


class _PureVariableScope:
    """Switches the current VariableScope (no name scope); see `variable_scope`."""

    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 old_name_scope=None, dtype=_dt.float32, use_resource=None,
                 constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        self._store = _stores()[1]

    def _apply_overrides(self, scope: VariableScope, old_getter) -> None:
        if self._initializer is not None:
            scope.set_initializer(self._initializer)
        if self._regularizer is not None:
            scope.set_regularizer(self._regularizer)
        if self._caching_device is not None:
            scope.set_caching_device(self._caching_device)
        if self._partitioner is not None:
            scope.set_partitioner(self._partitioner)
        if self._custom_getter is not None:
            scope.set_custom_getter(_wrap_custom_getter(self._custom_getter, old_getter))
        if self._dtype is not None:
            scope.set_dtype(self._dtype)
        if self._use_resource is not None:
            scope.set_use_resource(self._use_resource)

    def __enter__(self) -> VariableScope:
        store = self._store
        self._old = store.current_scope
        s = self._name_or_scope
        if isinstance(s, VariableScope):
            self._new_name = s.name
            scope = VariableScope(
                s.reuse if not self._reuse else self._reuse, name=s.name,
                initializer=s.initializer, regularizer=s.regularizer,
                caching_device=s.caching_device, partitioner=s.partitioner,
                dtype=s.dtype, custom_getter=s.custom_getter,
                name_scope=s.original_name_scope, use_resource=s.use_resource,
                constraint=self._constraint if self._constraint is not None else
                s.constraint)
            self._apply_overrides(scope, s.custom_getter)
            store.open_variable_scope(self._new_name)
            self._old_subscopes = dict(store.variable_scopes_count)
        else:
            old = self._old
            self._new_name = old.name + "/" + s if old.name else s
            reuse = self._reuse or old.reuse  # reuse is inherited by sub-scopes
            scope = VariableScope(
                reuse, name=self._new_name, initializer=old.initializer,
                regularizer=old.regularizer, caching_device=old.caching_device,
                partitioner=old.partitioner, dtype=old.dtype, use_resource=old.use_resource,
                custom_getter=old.custom_getter,
                name_scope=s if self._old_name_scope is None else self._old_name_scope,
                constraint=self._constraint)
            self._apply_overrides(scope, old.custom_getter)
            store.open_variable_scope(self._new_name)
        store.current_scope = scope
        return scope

    def __exit__(self, *exc):
        store = self._store
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old
        return False


@tf_export("variable_scope")
class variable_scope:  # noqa: N801 - TF1's name
    """A context manager for defining ops that create variables (TF1 `tf.variable_scope`).

    Args:
      name_or_scope: a string (relative to the current scope) or a VariableScope to
        re-enter.
      default_name: the name to use, made unique, when `name_or_scope` is None.
      values: tensors passed to the op function (they pick the graph).
      initializer, regularizer, caching_device, partitioner, custom_getter, dtype,
      use_resource, constraint: defaults for get_variable inside.
      reuse: True (variables must exist), None/False (inherit the outer scope's reuse),
        or AUTO_REUSE (create if needed).
      auxiliary_name_scope: if False, no name scope is opened.

    Yields:
      The VariableScope.

    Raises:
      ValueError: reuse=True without a name; bad `reuse`.
      TypeError: neither a name nor a default name, or a bad `name_or_scope`.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # a scope cannot turn reuse off for an outer reusing scope
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError("The auxiliary_name_scope must be `True` or `False`, while get "
                            "{}".format(auxiliary_name_scope))
        if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._reuse = reuse
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        self._auxiliary_name_scope = auxiliary_name_scope
        self._stack = []

    def _pure(self, name_or_scope, old_name_scope):
        return _PureVariableScope(
            name_or_scope, reuse=self._reuse, initializer=self._initializer,
            regularizer=self._regularizer, caching_device=self._caching_device,
            partitioner=self._partitioner, custom_getter=self._custom_getter,
            old_name_scope=old_name_scope, dtype=self._dtype,
            use_resource=self._use_resource, constraint=self._constraint)

    def _enter(self, cm):
        value = cm.__enter__()
        self._stack.append(cm)
        return value

    def __enter__(self) -> VariableScope:
        g = _graph._graph_of(self._values) if self._values else _graph.get_default_graph()
        try:
            self._enter(g.as_default())
            if self._auxiliary_name_scope:
                name_scope_cm = None
            else:
                cur = g.get_name_scope()
                name_scope_cm = g.name_scope(cur + "/" if cur else None)
            s = self._name_or_scope
            if s is not None:
                ns = s if isinstance(s, str) else s.name.split("/")[-1]
                if ns or name_scope_cm is not None:
                    ns_name = self._enter(name_scope_cm or g.name_scope(ns))
                    old = ns_name if isinstance(s, str) else s.original_name_scope
                    return self._enter(self._pure(s, old))
                return self._enter(self._pure(s, None))
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            ns_name = self._enter(name_scope_cm or g.name_scope(self._default_name))
            unique = _get_unique_variable_scope(self._default_name)
            return self._enter(self._pure(unique, ns_name))
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        while self._stack:
            self._stack.pop().__exit__(*exc)
        return False


@tf_export("variable_op_scope")
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """Deprecated: `variable_scope(name_or_scope, default_name, values, ...)`."""
    return variable_scope(name_or_scope, default_name=default_name, values=values,
                          initializer=initializer, regularizer=regularizer,
                          caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                          use_resource=use_resource, constraint=constraint)
