"""Optimizer: the base class of the training algorithms (OSDI §4.1).

An optimizer is ordinary user-level graph construction: `compute_gradients` calls
`tf.gradients`, and `apply_gradients` adds, for each variable, ops that update it and its
*slots* (per-variable state such as Adagrad's accumulator, stored in ordinary
non-trainable Variables colocated with the variable they belong to). Nothing here is
privileged: a parameter server is just the device that holds the variables, and the
update ops run there because they are colocated with them.

Dispatch (as in TF1, where every variable here is a resource variable):
  dense gradient  -> `_resource_apply_dense(grad, var)`  (default: `_apply_dense`)
  IndexedSlices   -> `_resource_apply_sparse_duplicate_indices(values, var, indices)`,
                     which sums duplicate indices first and calls
                     `_resource_apply_sparse(values, var, indices)` (default:
                     `_apply_sparse(IndexedSlices, var)`).
The `var` argument of these methods is the Variable itself (TF1 calls it `handle`).
"""
from __future__ import annotations

from typing import Dict, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor

_VALID_DTYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _deduplicate_indexed_slices(values: Tensor, indices: Tensor):
    """Sums the rows of `values` that share an index: returns (summed values, unique
    indices), as TF1's optimizers do before a sparse update that is not linear in the
    gradient."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.math import segment_ops
    unique_indices, positions = indexing_select.unique(indices)
    summed = segment_ops.unsorted_segment_sum(values, positions,
                                              array_ops.shape(unique_indices)[0])
    return summed, unique_indices


def _var_key(var):
    """The key of a variable in the slot tables (one per graph op; the copies of a
    mirrored variable share their first copy's, so each copy finds its slots)."""
    container = getattr(var, "_distributed_container", None)
    return var.op if container is None else container.primary.op


def _scale_loss(loss):
    """`loss` / num_replicas where a strategy under an Estimator asks for MEAN loss
    reduction over several replicas (TF1's `Optimizer._scale_loss`); marks the graph so
    the Estimator reports the MEAN of the replicas' losses."""
    from tensorweave.distribute import distribute_lib
    g = _graph.get_default_graph()
    g._is_loss_scaled_by_optimizer = False
    if distribute_lib.get_loss_reduction() == distribute_lib.ReduceOp.MEAN:
        num_replicas = distribute_lib.get_strategy().num_replicas_in_sync
        if num_replicas > 1:
            loss = loss * (1.0 / num_replicas)
            g._is_loss_scaled_by_optimizer = True
    return loss


def _call_if_callable(x):
    return x() if callable(x) else x


def hyper_tensor(value, name: str):
    """A hyperparameter given as a number, a Tensor, or a callable returning one, as a
    scalar Tensor (what `_prepare` makes of each hyperparameter)."""
    return _checked_scalar(convert_to_tensor(_call_if_callable(value), name=name), name)


def _checked_scalar(t: Tensor, name: str) -> Tensor:
    """`t`, which must be a scalar as TF1's training kernels require of every
    hyperparameter: a static rank other than 0 is a ValueError now; an unknown shape is
    checked at run time (InvalidArgumentError), since the composite updates would
    otherwise broadcast a vector silently."""
    rank = t.shape.ndims
    if rank == 0:
        return t
    if rank is not None:
        raise ValueError("Shape must be rank 0 but is rank %d for hyperparameter '%s' "
                         "(%s)" % (rank, name, t.name))
    from tensorweave.ops.array.array_shape_ops import ensure_shape
    return ensure_shape(t, [], name=name + "_is_scalar")


def _is_variable(v) -> bool:
    from tensorweave.ops.state.variables import Variable
    return isinstance(v, Variable)


# --- slots ------------------------------------------------------------------------------
def _slot_variable_name(primary, slot_name: str) -> str:
    """'W/Adagrad', made unique among the graph's names, under the current variable
    scope (TF1 creates slots in `variable_scope(None, default_name=...)`)."""
    from tensorweave.ops.state import variable_scope
    g = primary.graph
    base = primary.op.name + "/" + slot_name
    scope = variable_scope.get_variable_scope().name
    if scope:
        base = scope + "/" + base
    with g.name_scope(None):
        return g.unique_name(base)


def create_slot_variable(primary, initial_value, slot_name: str, dtype=None,
                         validate_shape: bool = True):
    """A non-trainable Variable in GLOBAL_VARIABLES, colocated with `primary` and named
    '<primary>/<slot_name>', initialized with `initial_value` (a value or a callable)."""
    from tensorweave.ops.state.variables import Variable
    g = primary.graph
    name = _slot_variable_name(primary, slot_name)
    with g.as_default(), g.name_scope(None), g.control_dependencies(None), \
            g.colocate_with(primary.op):
        # The trailing '/' names the variable exactly `name` (already made unique).
        slot = Variable(initial_value, trainable=False, name=name + "/", dtype=dtype,
                        validate_shape=validate_shape)
    _slice_like_primary(slot, primary)
    return slot


def _slice_like_primary(slot, primary) -> None:
    """A slot of a shard of a partitioned variable is the same shard of a partitioned
    slot, saved under '<full name>/<slot name>' as TF saves it. The slot name is cut
    from the slot's variable name exactly as TF's slot_creator cuts it (past the
    primary's op name), so checkpoints carry the same keys both ways, even where TF's
    cut gives an odd key (a slot made under a variable scope: 'outer/s/v/art_0/Adagrad')."""
    info = getattr(primary, "_save_slice_info", None)
    if info is None:
        return
    from tensorweave.ops.state.partitioned_variables import SaveSliceInfo
    slot_name = slot.name[len(primary.op.name + "/"):-2]
    n = slot.get_shape().ndims
    if n is None or n > 0:
        slot._set_save_slice_info(SaveSliceInfo(
            info.full_name + "/" + slot_name, info.full_shape[:n], info.var_offset[:n],
            info.var_shape[:n]))


def _fill_initial_value(primary, value, dtype):
    """A callable giving `value` broadcast to `primary`'s shape (ones_like/zeros_like
    style when the shape is not fully defined)."""
    from tensorweave.ops.array import array_ops
    shape = primary.get_shape()

    def init():
        if shape.is_fully_defined():
            return array_ops.fill(shape.as_list(), _as_value(value, dtype))
        return array_ops.fill(array_ops.shape(primary.initialized_value()),
                              _as_value(value, dtype))
    return init


def _as_value(value, dtype):
    from tensorweave.ops.array.constant_op import constant
    return constant(value, dtype=dtype)


# --- the base class -----------------------------------------------------------------------
@tf_export("train.Optimizer")
class Optimizer:
    """Base class for optimizers (TF1 `tf.train.Optimizer`).

    Subclasses implement `_create_slots`, `_prepare`, and `_apply_dense` /
    `_apply_sparse` (or their `_resource_` variants); `minimize` and `apply_gradients`
    do the rest.

    Args:
      use_locking: use locks for the update operations (resource updates here are
        always atomic; the flag is passed to fused update kernels).
      name: the name of the optimizer, used for its ops and slot variables.
      use_own_namescope_for_non_slot_vars: create the non-slot variables (Adam's beta
        powers) under a variable scope of their own, named after `name` and made
        unique where the optimizer is constructed, instead of the current scope.

    Raises:
      ValueError: `name` is empty.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str,
                 use_own_namescope_for_non_slot_vars: bool = False):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._non_slot_variable_scope = None
        if use_own_namescope_for_non_slot_vars:
            from tensorweave.ops.state import variable_scope
            with variable_scope.variable_scope(None, default_name=name) as scope:
                self._non_slot_variable_scope = scope
        # slot name -> {variable key -> slot Variable}
        self._slots: Dict[str, Dict] = {}
        # (name, graph) -> Variable
        self._non_slot_dict: Dict = {}

    def get_name(self) -> str:
        return self._name

    # --- the public API ---------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops: bool = False,
                 name: Optional[str] = None, grad_loss=None) -> Operation:
        """Adds ops minimizing `loss` by updating `var_list`: `compute_gradients`
        followed by `apply_gradients`.

        Args:
          loss: the Tensor to minimize.
          global_step: optional Variable incremented by one after the updates.
          var_list: Variables to update (default: the trainable variables).
          gate_gradients: GATE_NONE, GATE_OP or GATE_GRAPH.
          aggregation_method: how partial gradients are summed (`AggregationMethod`).
          colocate_gradients_with_ops: place each gradient op with its forward op.
          name: name of the returned op.
          grad_loss: optional Tensor, the gradient of `loss`.

        Returns:
          An Operation that updates the variables (and increments `global_step`).

        Raises:
          ValueError: no variable has a gradient, or arguments are invalid.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do "
                "not support gradients, between variables %s and loss %s."
                % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None,
                          colocate_gradients_with_ops: bool = False, grad_loss=None) -> list:
        """The gradients of `loss` for the variables in `var_list`.

        Args:
          loss: a Tensor (or a callable returning one).
          var_list: Variables (default: TRAINABLE_VARIABLES and
            TRAINABLE_RESOURCE_VARIABLES).
          gate_gradients: GATE_NONE, GATE_OP (each op's input gradients are computed
            together) or GATE_GRAPH (all gradients are computed before any is used).
          aggregation_method: passed to `tf.gradients`.
          colocate_gradients_with_ops: passed to `tf.gradients`.
          grad_loss: optional Tensor, the gradient of `loss`.

        Returns:
          A list of (gradient, variable) pairs; a gradient is a Tensor, an
          IndexedSlices, or None.

        Raises:
          ValueError: no variables, bad `gate_gradients`, or a non-float dtype.
        """
        from tensorweave.autodiff.gradients import gradients
        from tensorweave.ops.control_flow import structure
        from tensorweave.ops.state.variables import trainable_variables
        if callable(loss):
            loss = loss()
        loss = _scale_loss(loss)
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             "Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not %s"
                             % gate_gradients)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + \
                _graph.get_collection(GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            _check_optimizable(v)
        grads = gradients(loss, var_list, grad_ys=grad_loss,
                          gate_gradients=(gate_gradients == Optimizer.GATE_OP),
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate_all(grads, structure)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name: Optional[str] = None,
                        skip_gradients_aggregation: bool = False) -> Operation:
        """Adds ops applying the gradients to the variables.

        Args:
          grads_and_vars: (gradient, variable) pairs from `compute_gradients`; pairs
            with a None gradient are skipped.
          global_step: optional Variable incremented by one after the updates.
          name: name of the returned op (default: the optimizer's name).
          skip_gradients_aggregation: under a tf.distribute strategy, apply each
            replica's gradients as they are (no all-reduce across replicas).

        Returns:
          An Operation that applies the gradients (and then increments `global_step`).

        Raises:
          TypeError: a gradient is not a Tensor, IndexedSlices or None.
          ValueError: no pairs, or every gradient is None.
        """
        from tensorweave.distribute import distribute_lib
        if distribute_lib.has_strategy() and not skip_gradients_aggregation:
            # under a tf.distribute strategy: all-reduce and update every copy
            from tensorweave.distribute import distributed_apply
            return distributed_apply.apply_in_replica_context(self, grads_and_vars,
                                                              global_step, name)
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                if not isinstance(g, IndexedSlices):
                    try:
                        g = convert_to_tensor(g)
                    except (TypeError, ValueError):
                        raise TypeError("Gradient must be convertible to a Tensor or "
                                        "IndexedSlices, or None: %s" % (g,)) from None
            _check_optimizable(v)
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: %s."
                             % ([str(v) for _, v in converted],))
        for v in var_list:
            if isinstance(v, Tensor):
                raise NotImplementedError("Trying to update a Tensor %s" % (v,))
        g = var_list[0].graph
        with g.as_default():
            with g.control_dependencies(None):
                self._create_slots(var_list)
            update_ops = []
            with g.name_scope(name or self._name) as scope:
                self._prepare()
                for grad, var in converted:
                    if grad is None:
                        continue
                    with g.name_scope("update_" + var.op.name), g.colocate_with(var.op):
                        update_ops.append(self._update_op(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with g.control_dependencies([self._finish(update_ops, "update")]):
                        with g.colocate_with(global_step.op):
                            apply_updates = _increment(global_step, scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = g.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    def get_slot(self, var, name: str):
        """The slot `name` created for `var` (e.g. 'accumulator'), or None."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self) -> List[str]:
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots.keys())

    def variables(self) -> list:
        """The optimizer's variables in the default graph (slots and non-slot variables
        such as Adam's beta powers), sorted by name."""
        g = _graph.get_default_graph()
        out = [v for v in self._non_slot_variables() if v.graph is g]
        for slots in self._slots.values():
            out.extend(v for v in slots.values() if v.graph is g)
        return sorted(out, key=lambda v: v.name)

    # --- dispatch -------------------------------------------------------------------
    # TF1 updates a reference variable with `_apply_dense` / `_apply_sparse_duplicate_indices`
    # and a resource variable with the `_resource_apply_*` pair, so a subclass that
    # overrides one family (AdamW's `_apply_sparse`, say) sees its override called as in
    # TF. Each family's default falls back to the other one a subclass overrides; the
    # built-in optimizers write `_apply_dense` and `_resource_apply_sparse`.
    def _update_op(self, grad, var):
        as_ref = getattr(var, "_feeds_reads", False)  # made as a TF1 reference variable
        if isinstance(grad, IndexedSlices):
            if var.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            if as_ref:
                return self._apply_sparse_duplicate_indices(grad, var)
            return self._resource_apply_sparse_duplicate_indices(grad.values, var,
                                                                 grad.indices)
        update = self._apply_dense(grad, var) if as_ref else \
            self._resource_apply_dense(grad, var)
        if var.constraint is None:
            return update
        with var.graph.control_dependencies([update]):
            return var.assign(var.constraint(var.value()), read_value=False)

    def _overrides(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(Optimizer, method)

    def _resource_apply_dense(self, grad, var):
        """The update of `var` by a dense gradient (default: `_apply_dense`)."""
        if self._overrides("_apply_dense"):
            return self._apply_dense(grad, var)
        raise NotImplementedError("%s does not implement dense updates (_apply_dense)"
                                  % type(self).__name__)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        """The update of rows `indices` of `var`, where an index may repeat (default:
        sum the repeats, then `_resource_apply_sparse`)."""
        summed, unique = _deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed, var, unique)

    def _resource_apply_sparse(self, grad, var, indices):
        """The update of rows `indices` (unique) of `var` (default: `_apply_sparse`)."""
        if self._overrides("_apply_sparse"):
            from tensorweave.ops.state import resource_variable_ops as rv
            return self._apply_sparse(
                IndexedSlices(grad, indices, rv.variable_shape(var.handle)), var)
        raise NotImplementedError("%s does not implement sparse updates (_apply_sparse)"
                                  % type(self).__name__)

    def _apply_dense(self, grad, var):
        """The update of a reference variable by a dense gradient (default:
        `_resource_apply_dense`)."""
        if self._overrides("_resource_apply_dense"):
            return self._resource_apply_dense(grad, var)
        raise NotImplementedError("%s does not implement dense updates (_apply_dense)"
                                  % type(self).__name__)

    def _apply_sparse(self, grad, var):
        """The update of rows `grad.indices` (unique) of a reference variable (default:
        `_resource_apply_sparse`)."""
        if self._overrides("_resource_apply_sparse"):
            return self._resource_apply_sparse(grad.values, var, grad.indices)
        raise NotImplementedError("%s does not implement sparse updates (_apply_sparse)"
                                  % type(self).__name__)

    def _apply_sparse_duplicate_indices(self, grad, var):
        """The update of a reference variable by IndexedSlices whose indices may repeat
        (default: `_resource_apply_sparse_duplicate_indices` where only that is
        overridden, else sum the repeats and `_apply_sparse`)."""
        if self._overrides("_resource_apply_sparse_duplicate_indices") and \
                not self._overrides("_apply_sparse"):
            return self._resource_apply_sparse_duplicate_indices(grad.values, var,
                                                                 grad.indices)
        summed, unique = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique, grad.dense_shape), var)

    def _create_slots(self, var_list) -> None:
        """Creates the slots of each variable (none by default)."""

    def _prepare(self) -> None:
        """Creates the hyperparameter tensors of this apply step."""

    def _finish(self, update_ops, name_scope):
        """The op that completes an apply step (default: group the updates)."""
        from tensorweave.ops.control_flow import structure
        return structure.group(*update_ops, name=name_scope)

    # --- helpers for subclasses -------------------------------------------------------
    def _call_if_callable(self, param):
        """`param()` for a callable hyperparameter, else `param` (TF1's helper)."""
        return _call_if_callable(param)

    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name: str, op_name: str):
        """The slot `slot_name` of `var`, created from the Tensor or value `val`."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = create_slot_variable(var, val, op_name,
                                              validate_shape=var.get_shape()
                                              .is_fully_defined())
        return named[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype,
                                           slot_name: str, op_name: str):
        """The slot `slot_name` of `var`, created with `initializer(shape, dtype)`."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            dtype = _dt.as_dtype(dtype)
            shape = _shape_list(shape)

            def init():
                return initializer(shape, dtype=dtype)
            named[key] = create_slot_variable(var, init, op_name, dtype=dtype)
        return named[key]

    def _zeros_slot(self, var, slot_name: str, op_name: str):
        """A slot of zeros shaped like `var`."""
        return self._filled_slot(var, 0, slot_name, op_name)

    def _filled_slot(self, var, value, slot_name: str, op_name: str):
        """A slot shaped like `var` with every element `value`."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            dtype = var.dtype.base_dtype
            named[key] = create_slot_variable(
                var, _fill_initial_value(var, value, dtype), op_name, dtype=dtype,
                validate_shape=var.get_shape().is_fully_defined())
        return named[key]

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with):
        """A variable of the optimizer not tied to one variable (Adam's beta powers),
        created once per graph, colocated with `colocate_with`."""
        from tensorweave.ops.state import variable_scope
        from tensorweave.ops.state.variables import Variable
        g = colocate_with.graph
        key = (name, g)
        v = self._non_slot_dict.get(key)
        if v is None:
            with g.as_default(), g.control_dependencies(None), \
                    g.colocate_with(colocate_with.op):
                if self._non_slot_variable_scope is None:
                    v = Variable(initial_value, name=name, trainable=False)
                else:
                    with g.name_scope(None), \
                            variable_scope.variable_scope(self._non_slot_variable_scope):
                        v = variable_scope.get_variable(name, initializer=initial_value,
                                                        trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph=None):
        return self._non_slot_dict.get((name, graph or _graph.get_default_graph()))

    def _non_slot_variables(self) -> list:
        return list(self._non_slot_dict.values())

    def _assert_valid_dtypes(self, tensors) -> None:
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError("Invalid type %r for %s, expected: %s."
                                 % (dtype, t.name, [v for v in valid]))

    def _valid_dtypes(self):
        return set(_VALID_DTYPES)


# --- module helpers -----------------------------------------------------------------------
def _flatten(x) -> list:
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            out.extend(_flatten(y))
        return out
    if isinstance(x, dict):
        out = []
        for k in sorted(x):
            out.extend(_flatten(x[k]))
        return out
    return [x]


def _check_optimizable(v) -> None:
    """A var_list entry is a Variable, or a Tensor (TF1 computes gradients for a
    Tensor; only updating one is an error, raised by `apply_gradients`)."""
    if not (_is_variable(v) or isinstance(v, Tensor)):
        raise NotImplementedError("Trying to optimize unsupported type %r: tensorweave "
                                  "optimizers update tf.Variable objects" % (v,))


def _gate_all(grads, structure):
    """GATE_GRAPH: every gradient is available only once all are computed."""
    dense = [i for i, g in enumerate(grads) if isinstance(g, Tensor)]
    if not dense and not any(isinstance(g, IndexedSlices) for g in grads):
        return grads
    anchors = [g for g in grads if isinstance(g, Tensor)] + \
        [g.values for g in grads if isinstance(g, IndexedSlices)]
    gated = structure.tuple(anchors)
    out = list(grads)
    k = 0
    for i in dense:
        out[i] = gated[k]
        k += 1
    for i, g in enumerate(grads):
        if isinstance(g, IndexedSlices):
            out[i] = IndexedSlices(gated[k], g.indices, g.dense_shape)
            k += 1
    return out


def _shape_list(shape):
    from tensorweave.framework.shapes import as_shape
    return as_shape(shape).as_list()


def _increment(global_step, name: str):
    """global_step += 1, as one op named `name` (the train op)."""
    from tensorweave.ops.state import resource_variable_ops as rv
    from tensorweave.ops.array.constant_op import constant
    one = constant(1, dtype=global_step.dtype.base_dtype)
    return rv.assign_add_variable_op(global_step.handle, one, name=name)
