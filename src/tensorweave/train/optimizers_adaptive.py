"""RMSProp, Adam and FTRL, written from primitive ops and Variables (see `optimizers`).

The dense updates of Adam and RMSProp are TF1's fused kernels (`ResourceApplyAdam` of
`training_ops`, `ResourceApply[Centered]RMSProp` of `apply_ops`), measured faster than
their compositions of 10-17 ops per variable; everything else here is composed of
ordinary variable ops.
"""
from __future__ import annotations

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.train import apply_ops, training_ops
from tensorweave.train.optimizer import Optimizer, hyper_tensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_unary


def _ops():
    from tensorweave.train import optimizers
    return optimizers


# --- RMSProp ------------------------------------------------------------------------------
@tf_export("train.RMSPropOptimizer")
class RMSPropOptimizer(Optimizer):
    """RMSProp (TF1):
        ms = ms + (grad**2 - ms) * (1 - decay)
        mom = momentum * mom + lr * grad / sqrt(ms + epsilon)
        var -= mom
    With `centered`, also `mg = mg + (grad - mg) * (1 - decay)` and the denominator is
    sqrt(ms - mg**2 + epsilon). The 'rms' slot starts at ones.

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      decay: discounting factor for the history (default 0.9).
      momentum: momentum factor (default 0.0).
      epsilon: small value avoiding zero denominators (default 1e-10).
      use_locking: use locks for the updates.
      centered: normalize by the estimated variance of the gradient.
      name: name of the ops (default "RMSProp").
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, 1, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")
        self._decay_tensor = hyper_tensor(self._decay, "decay")
        self._momentum_tensor = hyper_tensor(self._momentum, "momentum")
        self._epsilon_tensor = hyper_tensor(self._epsilon, "epsilon")

    def _step(self, grad, var, ms, mg, mom):
        """(new ms, new mg or None, new mom) from the old slot values."""
        o = _ops()
        lr, rho, momentum, eps = (o.hyper(t, var) for t in (
            self._learning_rate_tensor, self._decay_tensor, self._momentum_tensor,
            self._epsilon_tensor))
        new_ms = ms + (grad * grad - ms) * (1.0 - rho)
        denom = new_ms + eps
        new_mg = None
        if mg is not None:
            new_mg = mg + (grad - mg) * (1.0 - rho)
            denom = new_ms - new_mg * new_mg + eps
        new_mom = mom * momentum + grad * lr / math_unary.sqrt(denom)
        return new_ms, new_mg, new_mom

    def _slots_of(self, var):
        return (self.get_slot(var, "rms"), self.get_slot(var, "mg"),
                self.get_slot(var, "momentum"))

    def _apply_dense(self, grad, var):
        # TF1's fused ResourceApplyRMSProp / ResourceApplyCenteredRMSProp, in place: one
        # kernel where the composition took about ten ops and three assignments (a TF1
        # autoencoder's step with two [784, 256] variables 2.38 -> 2.17 ms)
        o = _ops()
        ms, mg, mom = self._slots_of(var)
        hypers = [o.hyper(t, var) for t in (self._learning_rate_tensor, self._decay_tensor,
                                            self._momentum_tensor, self._epsilon_tensor)]
        if mg is None:
            return apply_ops.resource_apply_rms_prop(
                var.handle, ms.handle, mom.handle, *hypers, grad,
                use_locking=self._use_locking)
        return apply_ops.resource_apply_centered_rms_prop(
            var.handle, mg.handle, ms.handle, mom.handle, *hypers, grad,
            use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        o = _ops()
        ms, mg, mom = self._slots_of(var)
        new_ms, new_mg, new_mom = self._step(
            grad, var, o.gather(ms, indices),
            o.gather(mg, indices) if mg is not None else None, o.gather(mom, indices))
        updates = [o.scatter_update(ms, indices, new_ms),
                   o.scatter_update(mom, indices, new_mom),
                   o.scatter_sub(var, indices, new_mom)]
        if mg is not None:
            updates.append(o.scatter_update(mg, indices, new_mg))
        return o.group(*updates)


# --- Adam ---------------------------------------------------------------------------------
@tf_export("train.AdamOptimizer")
class AdamOptimizer(Optimizer):
    """Adam (Kingma & Ba), as TF1 computes it:
        lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
        m = m + (grad - m) * (1 - beta1);  v = v + (grad**2 - v) * (1 - beta2)
        var -= lr_t * m / (sqrt(v) + epsilon)
    beta1^t and beta2^t are the non-slot variables 'beta1_power' and 'beta2_power',
    multiplied by beta1 and beta2 after each apply. A sparse gradient decays all of m
    and v and updates all of var (TF1's non-lazy Adam).

    Args:
      learning_rate: a float, scalar Tensor, or callable (default 0.001).
      beta1: decay of the first moment (default 0.9).
      beta2: decay of the second moment (default 0.999).
      epsilon: small constant for numerical stability (default 1e-8).
      use_locking: use locks for the updates.
      name: name of the ops (default "Adam").
      use_own_namescope_for_non_slot_vars: create beta1_power/beta2_power in a
        variable scope of their own (see Optimizer).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adam",
                 use_own_namescope_for_non_slot_vars: bool = False):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, \
            epsilon

    def _get_beta_accumulators(self):
        g = _graph.get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=g),
                self._get_non_slot_variable("beta2_power", graph=g))

    def _create_slots(self, var_list):
        self._create_beta_powers(min(var_list, key=lambda x: x.name))
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _create_beta_powers(self, first_var):
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)

    def _prepare(self):
        self._lr_t = hyper_tensor(self._lr, "learning_rate")
        self._beta1_t = hyper_tensor(self._beta1, "beta1")
        self._beta2_t = hyper_tensor(self._beta2, "beta2")
        self._epsilon_t = hyper_tensor(self._epsilon, "epsilon")
        beta1_power, beta2_power = self._get_beta_accumulators()
        self._beta1_power_t = beta1_power.value()
        self._beta2_power_t = beta2_power.value()

    def _hypers(self, var):
        o = _ops()
        return [o.hyper(t, var) for t in (self._beta1_power_t, self._beta2_power_t,
                                          self._lr_t, self._beta1_t, self._beta2_t,
                                          self._epsilon_t)]

    def _apply_dense(self, grad, var):
        b1p, b2p, lr, b1, b2, eps = self._hypers(var)
        return training_ops.resource_apply_adam(
            var.handle, self.get_slot(var, "m").handle, self.get_slot(var, "v").handle,
            b1p, b2p, lr, b1, b2, eps, grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        o = _ops()
        b1p, b2p, lr, b1, b2, eps = self._hypers(var)
        lr = lr * math_unary.sqrt(1.0 - b2p) / (1.0 - b1p)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_decay = o.assign(m, o.read(m) * b1)
        m_t = o.read(m, after=o.scatter_add_after(m, indices, grad * (1.0 - b1), m_decay))
        v_decay = o.assign(v, o.read(v) * b2)
        v_t = o.read(v, after=o.scatter_add_after(v, indices, grad * grad * (1.0 - b2),
                                                  v_decay))
        return o.assign_sub(var, lr * m_t / (math_unary.sqrt(v_t) + eps))

    def _finish(self, update_ops, name_scope):
        o = _ops()
        beta1_power, beta2_power = self._get_beta_accumulators()
        g = beta1_power.graph
        with g.control_dependencies(update_ops), g.colocate_with(beta1_power.op):
            update_beta1 = o.assign(beta1_power, o.read(beta1_power) * self._beta1_t)
            update_beta2 = o.assign(beta2_power, o.read(beta2_power) * self._beta2_t)
        return o.group(*(list(update_ops) + [update_beta1, update_beta2]),
                       name=name_scope)


# --- FTRL ---------------------------------------------------------------------------------
def ftrl_step(grad, w, accum, linear, lr, l1, l2, lr_power, l2_shrinkage=None):
    """(new w, new accum, new linear) of one FTRL step (TF's ApplyFtrl kernel, ApplyFtrlV2
    with an `l2_shrinkage`): `lr_power` -0.5 as a Python number takes square roots."""
    g_shrunk = grad if l2_shrinkage is None else grad + 2.0 * l2_shrinkage * w
    new_accum = accum + grad * grad
    if isinstance(lr_power, (int, float)) and lr_power == -0.5:
        new_root, old_root = math_unary.sqrt(new_accum), math_unary.sqrt(accum)
    else:
        new_root = math_binary.pow(new_accum, -lr_power)
        old_root = math_binary.pow(accum, -lr_power)
    new_linear = linear + g_shrunk - (new_root - old_root) / lr * w
    quadratic = new_root / lr + 2.0 * l2
    x = (math_unary.sign(new_linear) * l1 - new_linear) / quadratic
    keep = math_binary.greater(math_unary.abs(new_linear), l1)
    return indexing_select.where(keep, x, array_ops.zeros_like(x)), new_accum, new_linear


@tf_export("train.FtrlOptimizer")
class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al. 2013), as TF1's ApplyFtrlV2 computes it:
        g' = grad + 2 * l2_shrinkage * var
        new_accum = accum + grad**2
        linear += g' - (new_accum^(-p) - accum^(-p)) / lr * var
        quadratic = new_accum^(-p) / lr + 2 * l2'
        var = (sign(linear) * l1 - linear) / quadratic  if |linear| > l1  else 0
        accum = new_accum
    where p = learning_rate_power and l2' = l2 + beta / (2 * lr).

    Args:
      learning_rate: a float, scalar Tensor, or callable.
      learning_rate_power: <= 0 (default -0.5).
      initial_accumulator_value: >= 0 (default 0.1).
      l1_regularization_strength, l2_regularization_strength: >= 0.
      use_locking: use locks for the updates.
      name: name of the ops and slots (default "Ftrl").
      accum_name, linear_name: names of the slot variables (default: `name`).
      l2_shrinkage_regularization_strength: >= 0; magnitude penalty on the gradient.
      beta: optional float added to the L2 strength as beta / (2 * lr).

    Raises:
      ValueError: an argument is out of range.
    """

    def __init__(self, learning_rate, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking: bool = False,
                 name: str = "Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        for value, what in ((initial_accumulator_value, "initial_accumulator_value"),
                            (l1_regularization_strength, "l1_regularization_strength"),
                            (l2_regularization_strength, "l2_regularization_strength"),
                            (l2_shrinkage_regularization_strength,
                             "l2_shrinkage_regularization_strength")):
            if value < 0.0:
                raise ValueError("%s %f needs to be positive or zero" % (what, value))
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero"
                             % learning_rate_power)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, self._initial_accumulator_value, "accum",
                              self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._learning_rate_tensor = hyper_tensor(self._learning_rate, "learning_rate")
        self._l1_tensor = convert_to_tensor(self._l1, name="l1_regularization_strength")
        self._l2_tensor = convert_to_tensor(
            self._l2 + self._beta / (2.0 * self._learning_rate)
            if self._beta else self._l2, name="adjusted_l2_regularization_strength")
        self._l2_shrinkage_tensor = convert_to_tensor(
            self._l2_shrinkage, name="l2_shrinkage_regularization_strength")
        self._lr_power_tensor = convert_to_tensor(self._learning_rate_power,
                                                  name="learning_rate_power")

    def _step(self, grad, var, w, accum, linear):
        """(new var rows, new accum, new linear) from the old values."""
        o = _ops()
        lr, l1, l2, shrink = (o.hyper(t, var) for t in (
            self._learning_rate_tensor, self._l1_tensor, self._l2_tensor,
            self._l2_shrinkage_tensor))
        lr_power = (self._learning_rate_power if self._learning_rate_power == -0.5
                    else o.hyper(self._lr_power_tensor, var))
        return ftrl_step(grad, w, accum, linear, lr, l1, l2, lr_power,
                         shrink if self._l2_shrinkage > 0 else None)

    def _apply_dense(self, grad, var):
        o = _ops()
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        new_w, new_accum, new_linear = self._step(grad, var, o.read(var), o.read(accum),
                                                  o.read(linear))
        return o.group(o.assign(var, new_w), o.assign(accum, new_accum),
                       o.assign(linear, new_linear))

    def _resource_apply_sparse(self, grad, var, indices):
        o = _ops()
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        new_w, new_accum, new_linear = self._step(
            grad, var, o.gather(var, indices), o.gather(accum, indices),
            o.gather(linear, indices))
        return o.group(o.scatter_update(var, indices, new_w),
                       o.scatter_update(accum, indices, new_accum),
                       o.scatter_update(linear, indices, new_linear))
