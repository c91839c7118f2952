"""State helpers: tf.assign and friends, the function forms of Variable updates.

Each takes a Variable (or a resource handle tensor) and returns what TF1 returns for a
resource variable: a Tensor holding the value after the update (a read ordered after
it).
"""
from __future__ import annotations

import contextlib
from typing import Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.state import resource_variable_ops as rv


def _variable(ref, fn_name: str):
    """The variable `ref` stands for, and a context to build its update in: a Variable,
    its TF1 reference tensor (`g.get_tensor_by_name("w:0")`), or the result of an update
    of a TF1 reference variable (TF1's assign returns the variable's reference), after
    which the new update is ordered, as TF1's update ran after the one it reads."""
    from tensorweave.ops.state.variables import Variable, variable_of_ref_tensor, \
        variable_updated_by
    if isinstance(ref, Variable):
        return ref, _NO_ORDER
    var = variable_of_ref_tensor(ref)
    if var is not None:
        return var, _NO_ORDER
    var = variable_updated_by(ref)
    if var is not None:
        return var, _graph.control_dependencies([ref.op])
    raise TypeError("%s requires a tf.Variable as `ref`, got %r (tensorweave has no "
                    "reference tensors)" % (fn_name, ref))


_NO_ORDER = contextlib.nullcontext()


@tf_export("assign")
def assign(ref, value, validate_shape: Optional[bool] = None, use_locking=None,
           name: Optional[str] = None):
    """Assigns `value` to the variable `ref` (TF1 `tf.assign`).

    Args:
      ref: a Variable.
      value: the new value, of the variable's dtype.
      validate_shape: if False, the value may have a different shape than a TF1
        reference variable (which takes the new shape). Default True. A resource
        variable ignores it, as in TF: the value must fit its static shape.
      use_locking: accepted; resource updates are always atomic.
      name: name of the assign op.

    Returns:
      A Tensor with the value after the assignment.

    Raises:
      ValueError: static shapes conflict (with validate_shape).
      TypeError: `ref` is not a Variable; for a TF1 reference variable, `value` is a
        tensor of another dtype.
    """
    v, order = _variable(ref, "assign")
    with order:
        return v._assign(value, validate_shape is not False, name, True)


@tf_export("assign_add")
def assign_add(ref, value, use_locking=None, name: Optional[str] = None):
    """Adds `value` to the variable `ref`, atomically; returns the new value."""
    v, order = _variable(ref, "assign_add")
    with order:
        return v.assign_add(value, use_locking=use_locking, name=name)


@tf_export("assign_sub")
def assign_sub(ref, value, use_locking=None, name: Optional[str] = None):
    """Subtracts `value` from the variable `ref`, atomically; returns the new value."""
    v, order = _variable(ref, "assign_sub")
    with order:
        return v.assign_sub(value, use_locking=use_locking, name=name)


def _scatter(fn_name, builder):
    def scatter(ref, indices, updates, use_locking: bool = True,
                name: Optional[str] = None):
        v, order = _variable(ref, fn_name)
        # TF1's op name: "ScatterUpdate", ... (the new value carries it, see _updated)
        tf1_name = "".join(part.capitalize() for part in fn_name.split("_"))
        with order:
            return v._updated(lambda u, n: builder(v.handle, indices, u, name=n), tf1_name,
                              name, True, updates, value_name="updates")
    scatter.__name__ = fn_name
    scatter.__qualname__ = fn_name
    return scatter


_SCATTER_DOC = """%s the rows `indices` of the variable `ref` with `updates` (TF1 `tf.%s`).

    Args:
      ref: a Variable with at least one dimension.
      indices: int32/int64 Tensor of row indices (any shape; must be in range).
      updates: Tensor of shape `indices.shape + ref.shape[1:]`, or a scalar.
      use_locking: accepted; resource updates are always atomic.
      name: name of the op.

    Returns:
      A Tensor with the value of `ref` after the update.

    Raises:
      ValueError: static shapes conflict.
      InvalidArgumentError (at run time): an index is out of range.
    """

scatter_update = _scatter("scatter_update", rv.resource_scatter_update)
scatter_add = _scatter("scatter_add", rv.resource_scatter_add)
scatter_sub = _scatter("scatter_sub", rv.resource_scatter_sub)
scatter_mul = _scatter("scatter_mul", rv.resource_scatter_mul)
scatter_div = _scatter("scatter_div", rv.resource_scatter_div)
scatter_min = _scatter("scatter_min", rv.resource_scatter_min)
scatter_max = _scatter("scatter_max", rv.resource_scatter_max)
for _fn, _verb in ((scatter_update, "Sets"), (scatter_add, "Adds to"),
                   (scatter_sub, "Subtracts from"), (scatter_mul, "Multiplies"),
                   (scatter_div, "Divides"), (scatter_min, "Takes the minimum of"),
                   (scatter_max, "Takes the maximum of")):
    _fn.__doc__ = _SCATTER_DOC % (_verb, _fn.__name__)
    tf_export(_fn.__name__)(_fn)


def _scatter_nd(fn_name, builder):
    def scatter_nd(ref, indices, updates, use_locking: bool = True,
                   name: Optional[str] = None):
        v, order = _variable(ref, fn_name)
        tf1_name = "".join(part.capitalize() for part in fn_name.split("_"))
        with order:
            return v._scatter_nd(builder, tf1_name, indices, updates, name,
                                 use_locking=use_locking)
    scatter_nd.__name__ = fn_name
    scatter_nd.__qualname__ = fn_name
    scatter_nd.__doc__ = """Applies sparse updates at n-d `indices` of the variable `ref`
    (TF1 `tf.%s`): `indices` has shape [..., K], `updates` shape
    `indices.shape[:-1] + ref.shape[K:]`. Returns the value after the update.""" % fn_name
    return tf_export(fn_name)(scatter_nd)


scatter_nd_update = _scatter_nd("scatter_nd_update", rv.resource_scatter_nd_update)
scatter_nd_add = _scatter_nd("scatter_nd_add", rv.resource_scatter_nd_add)
scatter_nd_sub = _scatter_nd("scatter_nd_sub", rv.resource_scatter_nd_sub)


@tf_export("count_up_to")
def count_up_to(ref, limit: int, name: Optional[str] = None):
    """Increments the integer scalar variable `ref` until it reaches `limit`.

    Returns:
      A Tensor with the value before the increment.

    Raises:
      OutOfRangeError (at run time): the variable already equals `limit`.
    """
    v, order = _variable(ref, "count_up_to")
    with order, _graph.name_scope(name, "CountUpTo"):
        return rv.resource_count_up_to(v.handle, limit, T=v.dtype)


@tf_export("batch_scatter_update")
def batch_scatter_update(ref, indices, updates, use_locking: bool = True,
                         name: Optional[str] = None):
    """`scatter_update` along the axis after the leading dimensions `indices` shares with
    `ref` and `updates` (TF1 `tf.batch_scatter_update`):

        ref[i_1, ..., i_n, indices[i_1, ..., i_n, j]] = updates[i_1, ..., i_n, j]

    with n = rank(indices) - 1 and `updates.shape = indices.shape + ref.shape[n + 1:]`.
    Built as TF builds it: `scatter_nd_update` at the n-d indices made of a range over each
    leading dimension and `indices` (a 1-D `indices` is `scatter_update`).

    Args:
      ref: a Variable.
      indices: int32/int64 Tensor of known rank.
      updates: the new values.
      use_locking: accepted; resource updates are always atomic.
      name: name scope of the ops.

    Returns:
      A Tensor with the value of `ref` after the update.

    Raises:
      ValueError: `indices` has unknown rank, or the static shapes conflict.
      InvalidArgumentError (at run time): an index is out of range.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    v, order = _variable(ref, "batch_scatter_update")
    with order, _graph.name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = array_ops.shape(indices)
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = array_ops.expand_dims(indices, axis=-1)
        # one coordinate per leading dimension: its position, broadcast over the others
        coordinates = []
        for dim in range(rank - 1):
            size = indices_shape[dim]
            broadcast_shape = [1] * (rank + 1)
            broadcast_shape[dim] = size
            positions = array_ops.reshape(math_ops.range(0, size, 1, name="Range"),
                                          broadcast_shape)
            if positions.dtype != nd_indices.dtype:
                positions = math_ops.cast(positions, nd_indices.dtype)
            coordinates.append(positions * array_ops.ones_like(nd_indices))
        coordinates.append(nd_indices)
        final_indices = array_ops.concat(coordinates, axis=-1)
        return scatter_nd_update(v, final_indices, updates, use_locking=use_locking)
