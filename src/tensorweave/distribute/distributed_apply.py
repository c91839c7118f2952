"""The cross-replica half of `tf.train.Optimizer.apply_gradients` under a strategy
(TF1's `Optimizer._distributed_apply`): called once through merge_call with every
replica's gradients, it sums them across replicas and applies the sum to each copy of
each variable, so the copies stay equal."""
from __future__ import annotations

from tensorweave.distribute import distribute_lib as _lib
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys, Tensor


def apply_in_replica_context(optimizer, grads_and_vars, global_step, name):
    """`optimizer.apply_gradients` inside a replica: hands the gradients to
    merge_call, which applies the all-reduced gradients once for all replicas.

    Raises:
      RuntimeError: called in cross-replica context (TF1's message).
    """
    if _lib.in_cross_replica_context():
        raise RuntimeError("Use `_distributed_apply()` instead of `apply_gradients()` "
                           "in a cross-replica context.")
    # a None gradient is dropped, so all replicas hand merge_call the same structure
    grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
    if not grads_and_vars:
        raise ValueError("No gradients provided for any variable.")
    # the optimizer is bound, not passed: each replica may have built its own, and
    # the first replica's applies for all (as TF's bound `self._distributed_apply`)
    def merge_fn(strategy, grads_and_vars, global_step, name):
        return _distributed_apply(strategy, optimizer, grads_and_vars, global_step, name)
    return _lib.get_replica_context().merge_call(
        merge_fn, args=(grads_and_vars, global_step, name))


def _distributed_apply(strategy, optimizer, grads_and_vars, global_step, name):
    ext = strategy.extended
    g = _graph.get_default_graph()
    reduced = ext.batch_reduce_to(_lib.ReduceOp.SUM,
                                  [(grad, var) for grad, var in grads_and_vars])
    var_list = [var for _, var in grads_and_vars]
    with g.control_dependencies(None):
        optimizer._create_slots(var_list)

    def update(var, grad):
        with g.name_scope("update_" + var.op.name):
            return optimizer._update_op(grad, var)

    with g.name_scope(name or optimizer.get_name()) as scope:
        optimizer._prepare()
        update_ops = []
        for grad, var in zip(reduced, var_list):
            update_ops.extend(ext.update(var, update, args=(grad,), group=False))
        finish = ext.update_non_slot(var_list, lambda ops: optimizer._finish(ops, "update"),
                                     args=(update_ops,), group=False)
        if global_step is None:
            apply_updates = strategy.group(_values.Mirrored(list(finish)), name=scope)
        else:
            with g.control_dependencies(list(finish)):
                apply_updates = strategy.group(
                    _values.Mirrored(list(ext.update(global_step, _increment,
                                                     group=False))),
                    name=scope)
    if isinstance(apply_updates, Tensor):
        apply_updates = apply_updates.op
    train_ops = g.get_collection_ref(GraphKeys.TRAIN_OP)
    if apply_updates not in train_ops:
        train_ops.append(apply_updates)
    return apply_updates


def _increment(var):
    from tensorweave.ops.array.constant_op import constant
    from tensorweave.ops.state import resource_variable_ops as rv
    return rv.assign_add_variable_op(var.handle, constant(1, dtype=var.dtype.base_dtype))
