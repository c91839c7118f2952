"""The optimizers, written from primitive ops and Variables (OSDI §4.1).

Each optimizer follows the update formulas of TF1's training kernels (ApplyAdagrad,
ApplyMomentum, ...). Updates are compositions of the ordinary variable ops: in-place
AssignAdd/AssignSub for dense gradients, ResourceGather + ResourceScatter* for
IndexedSlices gradients, so a sparse update touches only the rows named by the gradient
(the variable is never copied). The dense updates of GradientDescent, Momentum, Adagrad
and Adam use the fused kernels of `training_ops` instead (the op types TF1 builds), where
one op measured faster than the composition (see that module). Resource updates always
lock the variable, so `use_locking` only reaches the fused kernels' attr.

This module holds the first-order and Adagrad-family optimizers; RMSProp, Adam and FTRL
are in `optimizers_adaptive`.
"""
from __future__ import annotations

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.train import training_ops
from tensorweave.train.optimizer import Optimizer, hyper_tensor
from tensorweave.ops.math import math_binary, math_unary


# --- building blocks of the composite updates ---------------------------------------------
def _rv():
    from tensorweave.ops.state import resource_variable_ops
    return resource_variable_ops


def hyper(value, var):
    """A hyperparameter Tensor in `var`'s dtype (a Cast only where the dtypes differ)."""
    from tensorweave.ops.math import math_ops
    return math_ops.cast(value, var.dtype.base_dtype)


def assign_add(var, delta):
    return _rv().assign_add_variable_op(var.handle, delta)


def assign_sub(var, delta):
    return _rv().assign_sub_variable_op(var.handle, delta)


def assign(var, value):
    return _rv().assign_variable_op(var.handle, value)


def read(var, after=None):
    """The value of `var`, read after the ops `after` (if given)."""
    rv = _rv()
    if after is None:
        return rv.read_variable_op(var.handle, var.dtype.base_dtype)
    with _graph.control_dependencies(after if isinstance(after, list) else [after]):
        return rv.read_variable_op(var.handle, var.dtype.base_dtype)


def gather(var, indices, after=None):
    """Rows `indices` of `var`, read after the ops `after` (if given)."""
    rv = _rv()
    if after is None:
        return rv.resource_gather(var.handle, indices, var.dtype.base_dtype)
    with _graph.control_dependencies(after if isinstance(after, list) else [after]):
        return rv.resource_gather(var.handle, indices, var.dtype.base_dtype)


def scatter_add(var, indices, values):
    return _rv().resource_scatter_add(var.handle, indices, values)


def scatter_add_after(var, indices, values, after):
    """`scatter_add`, run after the op `after`."""
    with _graph.control_dependencies([after]):
        return _rv().resource_scatter_add(var.handle, indices, values)


def scatter_sub(var, indices, values):
    return _rv().resource_scatter_sub(var.handle, indices, values)


def scatter_update(var, indices, values):
    return _rv().resource_scatter_update(var.handle, indices, values)


def group(*ops, name=None):
    from tensorweave.ops.control_flow import structure
    return structure.group(*ops, name=name)


def prox_shrink(prox, alpha, l1, l2):
    """The proximal step of TF's ApplyProximal* kernels: soft-threshold `prox` by
    alpha*l1 and scale by 1/(1 + alpha*l2). The kernels skip the threshold when l1 is
    0; for a Python number that is decided here (for a Tensor l1 the threshold formula
    gives the same result at l1 = 0)."""
    if isinstance(l1, (int, float)) and l1 <= 0:
        return prox / (1.0 + alpha * l2)
    shrunk = math_binary.maximum(math_unary.abs(prox) - alpha * l1, 0.0)
    return math_unary.sign(prox) * shrunk / (1.0 + alpha * l2)


# --- GradientDescent ----------------------------------------------------------------------
@tf_export("train.GradientDescentOptimizer")
class GradientDescentOptimizer(Optimizer):
    """Gradient descent: `var -= learning_rate * grad` (TF1).

    Args:
      learning_rate: a float, scalar Tensor, or callable returning one.
      use_locking: use locks for the updates.
      name: name of the ops (default "GradientDescent").
    """

    def __init__(self, learning_rate, use_locking: bool = False,
                 name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.resource_apply_gradient_descent(
            var.handle, hyper(self._learning_rate_tensor, var), grad,
            use_locking=self._use_locking)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        # Linear in the gradient: duplicates add up in the scatter itself.
        return scatter_sub(var, indices, grad * hyper(self._learning_rate_tensor, var))

    def _apply_sparse_duplicate_indices(self, grad, var):
        # the same for a reference variable: no deduplication (as TF's)
        return self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)

    def _apply_sparse(self, grad, var):
        return self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)


# --- Momentum -----------------------------------------------------------------------------
@tf_export("train.MomentumOptimizer")
class MomentumOptimizer(Optimizer):
    """Momentum: `accum = accum * momentum + grad; var -= lr * accum` (TF1); with
    `use_nesterov`, `var -= lr * grad + lr * momentum * accum`.

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      momentum: a float, scalar Tensor, or callable.
      use_locking: use locks for the updates.
      name: name of the ops (default "Momentum").
      use_nesterov: use Nesterov momentum.
    """

    def __init__(self, learning_rate, momentum, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")
        self._momentum_tensor = hyper_tensor(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        return training_ops.resource_apply_momentum(
            var.handle, accum.handle, hyper(self._learning_rate_tensor, var), grad,
            hyper(self._momentum_tensor, var), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)

    def _resource_apply_sparse(self, grad, var, indices):
        accum = self.get_slot(var, "momentum")
        return training_ops.resource_sparse_apply_momentum(
            var.handle, accum.handle, hyper(self._learning_rate_tensor, var), grad, indices,
            hyper(self._momentum_tensor, var), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)


# --- Adagrad ------------------------------------------------------------------------------
class _AccumulatorOptimizer(Optimizer):
    """What Adagrad and ProximalAdagrad share: a learning rate, and an 'accumulator' slot
    per variable starting at `initial_accumulator_value` (which must be positive)."""

    def __init__(self, learning_rate, initial_accumulator_value: float, use_locking: bool,
                 name: str):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")


@tf_export("train.AdagradOptimizer")
class AdagradOptimizer(_AccumulatorOptimizer):
    """Adagrad: `accum += grad**2; var -= lr * grad / sqrt(accum)` (TF1).

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      initial_accumulator_value: starting value of the accumulators (> 0).
      use_locking: use locks for the updates.
      name: name of the ops (default "Adagrad").

    Raises:
      ValueError: `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1,
                 use_locking: bool = False, name: str = "Adagrad"):
        super().__init__(learning_rate, initial_accumulator_value, use_locking, name)

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accumulator")
        return training_ops.resource_apply_adagrad(
            var.handle, accum.handle, hyper(self._learning_rate_tensor, var), grad,
            use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        accum = self.get_slot(var, "accumulator")
        return training_ops.resource_sparse_apply_adagrad(
            var.handle, accum.handle, hyper(self._learning_rate_tensor, var), grad, indices,
            use_locking=self._use_locking)


# --- Adadelta -----------------------------------------------------------------------------
@tf_export("train.AdadeltaOptimizer")
class AdadeltaOptimizer(Optimizer):
    """Adadelta (TF1):
        accum = rho * accum + (1 - rho) * grad**2
        update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
        accum_update = rho * accum_update + (1 - rho) * update**2
        var -= lr * update

    Args:
      learning_rate: a float, scalar Tensor, or callable (default 0.001).
      rho: decay rate (default 0.95).
      epsilon: constant for numerical stability (default 1e-8).
      use_locking: use locks for the updates.
      name: name of the ops (default "Adadelta").
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = hyper_tensor(self._lr, "lr")
        self._rho_t = hyper_tensor(self._rho, "rho")
        self._epsilon_t = hyper_tensor(self._epsilon, "epsilon")

    def _step(self, grad, var, accum, accum_update):
        """(new accum, new accum_update, var decrement) from the old slot values."""
        lr, rho, eps = (hyper(t, var) for t in (self._lr_t, self._rho_t, self._epsilon_t))
        new_accum = accum * rho + grad * grad * (1.0 - rho)
        update = math_unary.sqrt(accum_update + eps) * math_unary.rsqrt(new_accum + eps) * grad
        new_accum_update = accum_update * rho + update * update * (1.0 - rho)
        return new_accum, new_accum_update, update * lr

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accum")
        accum_update = self.get_slot(var, "accum_update")
        new_a, new_au, step = self._step(grad, var, read(accum), read(accum_update))
        return group(assign(accum, new_a), assign(accum_update, new_au),
                     assign_sub(var, step))

    def _resource_apply_sparse(self, grad, var, indices):
        accum = self.get_slot(var, "accum")
        accum_update = self.get_slot(var, "accum_update")
        new_a, new_au, step = self._step(grad, var, gather(accum, indices),
                                         gather(accum_update, indices))
        return group(scatter_update(accum, indices, new_a),
                     scatter_update(accum_update, indices, new_au),
                     scatter_sub(var, indices, step))


# --- Proximal methods ---------------------------------------------------------------------
@tf_export("train.ProximalGradientDescentOptimizer")
class ProximalGradientDescentOptimizer(Optimizer):
    """Proximal gradient descent with L1/L2 regularization (TF1):
        prox = var - lr * grad
        var = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      l1_regularization_strength, l2_regularization_strength: floats >= 0.
      use_locking: use locks for the updates.
      name: name of the ops (default "ProximalGradientDescent").
    """

    def __init__(self, learning_rate, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")

    def _new_rows(self, rows, grad, var):
        alpha = hyper(self._learning_rate_tensor, var)
        return prox_shrink(rows - alpha * grad, alpha, self._l1, self._l2)

    def _apply_dense(self, grad, var):
        return assign(var, self._new_rows(read(var), grad, var))

    def _resource_apply_sparse(self, grad, var, indices):
        return scatter_update(var, indices, self._new_rows(gather(var, indices), grad, var))


@tf_export("train.ProximalAdagradOptimizer")
class ProximalAdagradOptimizer(_AccumulatorOptimizer):
    """Proximal Adagrad (TF1):
        accum += grad**2; alpha = lr / sqrt(accum)
        prox = var - alpha * grad
        var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + alpha * l2)

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      initial_accumulator_value: starting value of the accumulators (> 0).
      l1_regularization_strength, l2_regularization_strength: floats >= 0.
      use_locking: use locks for the updates.
      name: name of the ops (default "ProximalAdagrad").

    Raises:
      ValueError: `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalAdagrad"):
        super().__init__(learning_rate, initial_accumulator_value, use_locking, name)
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _new_rows(self, rows, accum_rows, grad, var):
        alpha = hyper(self._learning_rate_tensor, var) * math_unary.rsqrt(accum_rows)
        return prox_shrink(rows - alpha * grad, alpha, self._l1, self._l2)

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accumulator")
        accum_update = assign_add(accum, grad * grad)
        return assign(var, self._new_rows(read(var), read(accum, after=accum_update),
                                          grad, var))

    def _resource_apply_sparse(self, grad, var, indices):
        accum = self.get_slot(var, "accumulator")
        accum_update = scatter_add(accum, indices, grad * grad)
        new_rows = self._new_rows(gather(var, indices),
                                  gather(accum, indices, after=accum_update), grad, var)
        return scatter_update(var, indices, new_rows)



# --- AdagradDA ----------------------------------------------------------------------------
@tf_export("train.AdagradDAOptimizer")
class AdagradDAOptimizer(Optimizer):
    """Adagrad Dual Averaging (TF1), for sparse linear models: with g the gradient
    accumulator, gg the squared-gradient one and T the global step + 1,
        g += grad; gg += grad**2
        var = -lr * shrink(g, l1 * T) / (l2 * T * lr + sqrt(gg))
    where shrink(g, t) = sign(g) * max(|g| - t, 0) (g itself when l1 is 0).

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      global_step: the global step variable (or an int64 Tensor); T is its value + 1.
      initial_gradient_squared_accumulator_value: starting value of gg (> 0).
      l1_regularization_strength, l2_regularization_strength: floats >= 0.
      use_locking: use locks for the updates.
      name: name of the ops and slots (default "AdagradDA").

    Raises:
      ValueError: `initial_gradient_squared_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             "%s" % initial_gradient_squared_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._global_step = global_step
        self._initial_gg = initial_gradient_squared_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._filled_slot(v, self._initial_gg, "gradient_squared_accumulator",
                              self._name)

    def _prepare(self):
        from tensorweave.ops.control_flow.structure import identity
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")
        self._global_step_on_worker = identity(self._global_step) + 1

    def _new_rows(self, g, gg, var):
        lr = hyper(self._learning_rate_tensor, var)
        steps = hyper(self._global_step_on_worker, var)
        if isinstance(self._l1, (int, float)) and self._l1 <= 0:
            shrunk = g
        else:
            shrunk = math_unary.sign(g) * math_binary.maximum(
                math_unary.abs(g) - hyper(self._l1, var) * steps, 0.0)
        return -lr * shrunk / (hyper(self._l2, var) * steps * lr + math_unary.sqrt(gg))

    def _apply_dense(self, grad, var):
        g = self.get_slot(var, "gradient_accumulator")
        gg = self.get_slot(var, "gradient_squared_accumulator")
        g_update, gg_update = assign_add(g, grad), assign_add(gg, grad * grad)
        return assign(var, self._new_rows(read(g, after=g_update),
                                          read(gg, after=gg_update), var))

    def _resource_apply_sparse(self, grad, var, indices):
        g = self.get_slot(var, "gradient_accumulator")
        gg = self.get_slot(var, "gradient_squared_accumulator")
        g_update = scatter_add(g, indices, grad)
        gg_update = scatter_add(gg, indices, grad * grad)
        return scatter_update(var, indices, self._new_rows(
            gather(g, indices, after=g_update), gather(gg, indices, after=gg_update), var))
