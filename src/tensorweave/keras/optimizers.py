"""`tf.keras.optimizers`: SGD, Adam, RMSprop, Adagrad, Adadelta, Adamax, Nadam and Ftrl as
TF 2.15's Keras has them in graph mode (the legacy OptimizerV2 classes, also under
`tf.keras.optimizers.legacy`), with `get`, `serialize` and `deserialize`.

Each update computes what the op TF's optimizer builds computes, in the same order of
operations: the fused kernels of tf.train where the math is the same (gradient descent,
Adam), elsewhere a composition of variable reads and assigns written after TF's kernel
(ResourceApplyKerasMomentum, ResourceApplyAdagradV2, ResourceApplyRMSProp, ...), or the
composition Keras itself writes (RMSprop without momentum, Nadam, sparse Adam). A
row-wise update (`_apply_rows`) runs on whole variables for dense gradients and on the
gathered rows for IndexedSlices, as TF's sparse kernels do.
"""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, serialization
from tensorweave.keras.optimizer_v2 import OptimizerV2, TFOptimizer
from tensorweave.train import optimizers as tf1_optimizers
from tensorweave.train import training_ops
from tensorweave.train.optimizers_adaptive import ftrl_step

_ops = tf1_optimizers  # read/gather/assign/scatter helpers on resource variables


def _apply_rows(var, slots, step, indices=None):
    """Writes `step(var value, *slot values)` -> (new var, *new slots) back: for the
    whole variables, or for rows `indices` only (a sparse gradient)."""
    variables = [var] + list(slots)
    if indices is None:
        new_values = step(*[_ops.read(v) for v in variables])
        return _ops.group(*[_ops.assign(v, n) for v, n in zip(variables, new_values)])
    new_values = step(*[_ops.gather(v, indices) for v in variables])
    return _ops.group(*[_ops.scatter_update(v, indices, n)
                        for v, n in zip(variables, new_values)])


def _scatter_add_read(var, indices, values):
    """Adds `values` to rows `indices` of `var`; the whole new value (as Keras'
    `_resource_scatter_add`)."""
    return _ops.read(var, after=_ops.scatter_add(var, indices, values))


def _check_momentum(momentum) -> bool:
    """Whether a momentum is used (a tensor, callable, or positive number).

    Raises:
      ValueError: a number outside [0, 1].
    """
    if isinstance(momentum, (int, float)) and (momentum < 0 or momentum > 1):
        raise ValueError("`momentum` must be between [0, 1]. Received: momentum=%s (of type "
                         "%s)." % (momentum, type(momentum)))
    return isinstance(momentum, tf.Tensor) or callable(momentum) or momentum > 0


# --- SGD ----------------------------------------------------------------------------------
class _WeightsWithoutIterations(OptimizerV2):
    """An optimizer whose set_weights also takes a list without the iterations count
    (Keras 1's form), giving it 0."""

    def set_weights(self, weights) -> None:
        """Sets the weights; a list without the iterations count gets 0 for it."""
        if len(self.weights) == len(weights) + 1:
            weights = [0] + list(weights)
        super().set_weights(weights)


class _RowWiseOptimizer(_WeightsWithoutIterations):
    """An optimizer whose dense and sparse steps are one `_update(grad, var,
    apply_state, indices)`: a sparse step updates the rows `indices` only."""

    def _update(self, grad, var, apply_state, indices=None):
        raise NotImplementedError("Must be implemented in subclasses.")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        return self._update(grad, var, apply_state)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        return self._update(grad, var, apply_state, indices)


@tf_export("keras.optimizers.SGD", "keras.optimizers.legacy.SGD")
class SGD(OptimizerV2):
    """Gradient descent, with momentum as Keras writes it:
        velocity = momentum * velocity - learning_rate * g
        w = w + velocity   (nesterov: w = w + momentum * velocity - learning_rate * g)

    Args:
      learning_rate: a float, tensor or callable (default 0.01).
      momentum: in [0, 1] (default 0: plain gradient descent).
      nesterov: Nesterov momentum.
      name: the name scope (default 'SGD').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.

    Raises:
      ValueError: a momentum outside [0, 1].
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov: bool = False,
                 name: str = "SGD", **kwargs):
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._momentum = _check_momentum(momentum)
        self._set_hyper("momentum", momentum)
        self.nesterov = nesterov

    def _create_slots(self, var_list) -> None:
        if self._momentum:
            self._add_slots(var_list, "momentum")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        apply_state[(var_device, var_dtype)]["momentum"] = tf.identity(
            self._get_hyper("momentum", var_dtype))

    def _momentum_step(self, grad, coefficients):
        lr, momentum = coefficients["lr_t"], coefficients["momentum"]

        def step(w, velocity):  # ResourceApplyKerasMomentum
            velocity = velocity * momentum - grad * lr
            if self.nesterov:
                return w + (velocity * momentum - grad * lr), velocity
            return w + velocity, velocity
        return step

    def _resource_apply_dense(self, grad, var, apply_state=None):
        coefficients = self._coefficients(var, apply_state)
        if self._momentum:
            return _apply_rows(var, [self.get_slot(var, "momentum")],
                               self._momentum_step(grad, coefficients))
        return training_ops.resource_apply_gradient_descent(
            var.handle, coefficients["lr_t"], grad, use_locking=self._use_locking)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices, **kwargs):
        if self._momentum:
            return super()._resource_apply_sparse_duplicate_indices(grad, var, indices,
                                                                    **kwargs)
        coefficients = self._coefficients(var, kwargs.get("apply_state"))
        return _ops.scatter_add(var, indices, -grad * coefficients["lr_t"])

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        coefficients = self._coefficients(var, apply_state)
        return _apply_rows(var, [self.get_slot(var, "momentum")],
                           self._momentum_step(grad, coefficients), indices)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay,
                      momentum=self._serialize_hyperparameter("momentum"),
                      nesterov=self.nesterov)
        return config


# --- Adam ---------------------------------------------------------------------------------
def _beta_powers(optimizer, var_dtype, apply_state, key) -> dict:
    """beta_1, beta_2 and their powers at step `iterations + 1`, in `apply_state[key]`."""
    local_step = tf.cast(optimizer.iterations + 1, var_dtype)
    beta_1_t = tf.identity(optimizer._get_hyper("beta_1", var_dtype))
    beta_2_t = tf.identity(optimizer._get_hyper("beta_2", var_dtype))
    coefficients = apply_state[key]
    coefficients.update(beta_1_t=beta_1_t, beta_2_t=beta_2_t,
                        beta_1_power=tf.pow(beta_1_t, local_step),
                        beta_2_power=tf.pow(beta_2_t, local_step),
                        epsilon=tf.convert_to_tensor(optimizer.epsilon, var_dtype),
                        one_minus_beta_1_t=1 - beta_1_t, one_minus_beta_2_t=1 - beta_2_t)
    return coefficients


@tf_export("keras.optimizers.Adam", "keras.optimizers.legacy.Adam")
class Adam(OptimizerV2):
    """Adam: with t = iterations + 1,
        m = m + (g - m) * (1 - beta_1);  v = v + (g^2 - v) * (1 - beta_2)
        w = w - lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)
    (amsgrad: the denominator uses the running maximum 'vhat' of v).

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      beta_1, beta_2: the decays of the moments (0.9, 0.999).
      epsilon: added to the denominator (default 1e-7).
      amsgrad: use the AMSGrad variant.
      name: the name scope (default 'Adam').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad: bool = False, name: str = "Adam", **kwargs):
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = epsilon or backend.epsilon()
        self.amsgrad = amsgrad

    def _create_slots(self, var_list) -> None:
        self._add_slots(var_list, "m", "v")
        if self.amsgrad:
            self._add_slots(var_list, "vhat")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        c = _beta_powers(self, var_dtype, apply_state, (var_device, var_dtype))
        c["lr"] = c["lr_t"] * (tf.sqrt(1 - c["beta_2_power"]) / (1 - c["beta_1_power"]))

    def set_weights(self, weights) -> None:
        """Sets the weights; a list with 'vhat' values for a non-amsgrad optimizer is cut
        to the weights it has (as TF)."""
        num_vars = int((len(self.weights) - 1) / 2)
        if len(weights) == 3 * num_vars + 1:
            weights = weights[:len(self.weights)]
        super().set_weights(weights)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        c = self._coefficients(var, apply_state)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        if not self.amsgrad:
            return training_ops.resource_apply_adam(
                var.handle, m.handle, v.handle, c["beta_1_power"], c["beta_2_power"],
                c["lr_t"], c["beta_1_t"], c["beta_2_t"], c["epsilon"], grad,
                use_locking=self._use_locking)

        def step(w, m_, v_, vhat):  # ResourceApplyAdamWithAmsgrad
            alpha = c["lr_t"] * tf.sqrt(1 - c["beta_2_power"]) / (1 - c["beta_1_power"])
            m_ = m_ + (grad - m_) * (1 - c["beta_1_t"])
            v_ = v_ + (tf.square(grad) - v_) * (1 - c["beta_2_t"])
            vhat = tf.maximum(vhat, v_)
            return w - (m_ * alpha) / (tf.sqrt(vhat) + c["epsilon"]), m_, v_, vhat
        return _apply_rows(var, [m, v, self.get_slot(var, "vhat")], step)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        c = self._coefficients(var, apply_state)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = m.assign(m * c["beta_1_t"])
        with tf.control_dependencies([m_t]):
            m_t = _scatter_add_read(m, indices, grad * c["one_minus_beta_1_t"])
        v_t = v.assign(v * c["beta_2_t"])
        with tf.control_dependencies([v_t]):
            v_t = _scatter_add_read(v, indices, (grad * grad) * c["one_minus_beta_2_t"])
        if not self.amsgrad:
            update = var.assign_sub(c["lr"] * m_t / (tf.sqrt(v_t) + c["epsilon"]))
            return tf.group(update, m_t, v_t)
        vhat = self.get_slot(var, "vhat")
        vhat_t = tf.maximum(vhat, v_t)
        with tf.control_dependencies([vhat_t]):
            vhat_t = vhat.assign(vhat_t)
        update = var.assign_sub(c["lr"] * m_t / (tf.sqrt(vhat_t) + c["epsilon"]))
        return tf.group(update, m_t, v_t, vhat_t)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay,
                      beta_1=self._serialize_hyperparameter("beta_1"),
                      beta_2=self._serialize_hyperparameter("beta_2"),
                      epsilon=self.epsilon, amsgrad=self.amsgrad)
        return config


# --- RMSprop ------------------------------------------------------------------------------
@tf_export("keras.optimizers.RMSprop", "keras.optimizers.legacy.RMSprop")
class RMSprop(_WeightsWithoutIterations):
    """RMSprop. Without momentum (Keras' own update):
        rms = rho * rms + (1 - rho) * g^2;  w = w - lr * g / (sqrt(rms) + epsilon)
    with momentum (TF's ApplyRMSProp kernel, epsilon inside the root):
        rms = rms + (g^2 - rms) * (1 - rho)
        mom = momentum * mom + lr * g / sqrt(rms + epsilon);  w = w - mom
    `centered` subtracts the square of the mean gradient 'mg' from rms in the root.

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      rho: the decay of the mean square (0.9).
      momentum: in [0, 1] (default 0).
      epsilon: default 1e-7.
      centered: normalize by the estimated variance of the gradient.
      name: the name scope (default 'RMSprop').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.

    Raises:
      ValueError: a momentum outside [0, 1].
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered: bool = False, name: str = "RMSprop", **kwargs):
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("rho", rho)
        self._momentum = _check_momentum(momentum)
        self._set_hyper("momentum", momentum)
        self.epsilon = epsilon or backend.epsilon()
        self.centered = centered

    def _create_slots(self, var_list) -> None:
        self._add_slots(var_list, "rms")
        if self._momentum:
            self._add_slots(var_list, "momentum")
        if self.centered:
            self._add_slots(var_list, "mg")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        c = apply_state[(var_device, var_dtype)]
        rho = tf.identity(self._get_hyper("rho", var_dtype))
        c.update(neg_lr_t=-c["lr_t"], epsilon=tf.convert_to_tensor(self.epsilon, var_dtype),
                 rho=rho, momentum=tf.identity(self._get_hyper("momentum", var_dtype)),
                 one_minus_rho=1.0 - rho)

    def _momentum_update(self, grad, var, c, indices=None):
        slots = [self.get_slot(var, "rms"), self.get_slot(var, "momentum")]
        if self.centered:
            slots.append(self.get_slot(var, "mg"))

        def step(w, ms, mom, mg=None):  # ResourceApplyRMSProp / ...CenteredRMSProp
            ms = ms + (tf.square(grad) - ms) * (1 - c["rho"])
            if mg is None:
                denom = ms + c["epsilon"]
            else:
                mg = mg + (grad - mg) * (1 - c["rho"])
                denom = (ms - tf.square(mg)) + c["epsilon"]
            mom = mom * c["momentum"] + (grad * c["lr_t"]) / tf.sqrt(denom)
            return (w - mom, ms, mom) + (() if mg is None else (mg,))
        return _apply_rows(var, slots, step, indices)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        c = self._coefficients(var, apply_state)
        if self._momentum:
            return self._momentum_update(grad, var, c)
        rms = self.get_slot(var, "rms")
        rms_t = rms.assign(c["rho"] * rms + c["one_minus_rho"] * tf.square(grad))
        denom_t = rms_t
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = mg.assign(c["rho"] * mg + c["one_minus_rho"] * grad)
            denom_t = rms_t - tf.square(mg_t)
        var_t = var - c["lr_t"] * grad / (tf.sqrt(denom_t) + c["epsilon"])
        return var.assign(var_t).op

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        c = self._coefficients(var, apply_state)
        if self._momentum:
            return self._momentum_update(grad, var, c, indices)
        rms = self.get_slot(var, "rms")
        rms_t = rms.assign(rms * c["rho"])
        with tf.control_dependencies([rms_t]):
            rms_t = _scatter_add_read(rms, indices, (grad * grad) * c["one_minus_rho"])
            denom_slice = tf.gather(rms_t, indices)
        updates = [rms_t]
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = mg.assign(mg * c["rho"])
            with tf.control_dependencies([mg_t]):
                mg_t = _scatter_add_read(mg, indices, grad * c["one_minus_rho"])
                denom_slice = denom_slice - tf.square(tf.gather(mg_t, indices))
            updates.append(mg_t)
        var_update = _ops.scatter_add(
            var, indices, c["neg_lr_t"] * grad / (tf.sqrt(denom_slice) + c["epsilon"]))
        return tf.group(var_update, *updates)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay, rho=self._serialize_hyperparameter("rho"),
                      momentum=self._serialize_hyperparameter("momentum"),
                      epsilon=self.epsilon, centered=self.centered)
        return config


# --- Adagrad ------------------------------------------------------------------------------
@tf_export("keras.optimizers.Adagrad", "keras.optimizers.legacy.Adagrad")
class Adagrad(_RowWiseOptimizer):
    """Adagrad (TF's ApplyAdagradV2):
        accumulator = accumulator + g^2;  w = w - lr * g / (sqrt(accumulator) + epsilon)

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      initial_accumulator_value: the accumulators' start (0.1), non-negative.
      epsilon: default 1e-7.
      name: the name scope (default 'Adagrad').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.

    Raises:
      ValueError: a negative initial_accumulator_value.
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name: str = "Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError("initial_accumulator_value must be non-negative: %s"
                             % initial_accumulator_value)
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon or backend.epsilon()

    def _create_slots(self, var_list) -> None:
        for var in var_list:
            init = tf.constant_initializer(self._initial_accumulator_value,
                                           dtype=var.dtype.base_dtype)
            self.add_slot(var, "accumulator", init)

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        c = apply_state[(var_device, var_dtype)]
        c.update(epsilon=tf.convert_to_tensor(self.epsilon, var_dtype), neg_lr_t=-c["lr_t"])

    def _update(self, grad, var, apply_state, indices=None):
        c = self._coefficients(var, apply_state)

        def step(w, accum):
            accum = accum + tf.square(grad)
            return w - grad * c["lr_t"] / (tf.sqrt(accum) + c["epsilon"]), accum
        return _apply_rows(var, [self.get_slot(var, "accumulator")], step, indices)

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        config.setdefault("initial_accumulator_value", 0.1)
        return super().from_config(config, custom_objects)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay,
                      initial_accumulator_value=self._initial_accumulator_value,
                      epsilon=self.epsilon)
        return config


# --- Adadelta -----------------------------------------------------------------------------
@tf_export("keras.optimizers.Adadelta", "keras.optimizers.legacy.Adadelta")
class Adadelta(_RowWiseOptimizer):
    """Adadelta (TF's ApplyAdadelta):
        accum_grad = rho * accum_grad + (1 - rho) * g^2
        update = sqrt(accum_var + epsilon) / sqrt(accum_grad + epsilon) * g
        w = w - lr * update;  accum_var = rho * accum_var + (1 - rho) * update^2

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      rho: the decay rate (0.95).
      epsilon: default 1e-7.
      name: the name scope (default 'Adadelta').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name: str = "Adadelta",
                 **kwargs):
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("rho", rho)
        self.epsilon = epsilon or backend.epsilon()

    def _create_slots(self, var_list) -> None:
        self._add_slots(var_list, "accum_grad", "accum_var")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        apply_state[(var_device, var_dtype)].update(
            epsilon=tf.convert_to_tensor(self.epsilon, var_dtype),
            rho=tf.identity(self._get_hyper("rho", var_dtype)))

    def _update(self, grad, var, apply_state, indices=None):
        c = self._coefficients(var, apply_state)
        rho, eps = c["rho"], c["epsilon"]

        def step(w, accum, accum_update):
            accum = accum * rho + tf.square(grad) * (1 - rho)
            update = tf.sqrt(accum_update + eps) * tf.math.rsqrt(accum + eps) * grad
            accum_update = accum_update * rho + tf.square(update) * (1 - rho)
            return w - update * c["lr_t"], accum, accum_update
        slots = [self.get_slot(var, "accum_grad"), self.get_slot(var, "accum_var")]
        return _apply_rows(var, slots, step, indices)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay, rho=self._serialize_hyperparameter("rho"),
                      epsilon=self.epsilon)
        return config


# --- Adamax -------------------------------------------------------------------------------
@tf_export("keras.optimizers.Adamax", "keras.optimizers.legacy.Adamax")
class Adamax(OptimizerV2):
    """Adamax (TF's ApplyAdaMax): with t = iterations + 1,
        m = m + (g - m) * (1 - beta_1);  v = max(beta_2 * v, |g|)
        w = w - lr / (1 - beta_1^t) * m / (v + epsilon)

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      beta_1, beta_2: the decays (0.9, 0.999).
      epsilon: default 1e-7.
      name: the name scope (default 'Adamax').
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name: str = "Adamax", **kwargs):
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = epsilon or backend.epsilon()

    def _create_slots(self, var_list) -> None:
        self._add_slots(var_list, "m", "v")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        c = _beta_powers(self, var_dtype, apply_state, (var_device, var_dtype))
        c["neg_scaled_lr"] = -c["lr_t"] / (1 - c["beta_1_power"])

    def _resource_apply_dense(self, grad, var, apply_state=None):
        c = self._coefficients(var, apply_state)

        def step(w, m, v):  # ResourceApplyAdaMax
            m = m + (grad - m) * (1 - c["beta_1_t"])
            v = tf.maximum(c["beta_2_t"] * v, tf.abs(grad))
            return w - c["lr_t"] / (1 - c["beta_1_power"]) * (m / (v + c["epsilon"])), m, v
        return _apply_rows(var, [self.get_slot(var, "m"), self.get_slot(var, "v")], step)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        c = self._coefficients(var, apply_state)

        def step(w, m, v):  # Keras' own sparse update
            m = m * c["beta_1_t"] + grad * c["one_minus_beta_1_t"]
            v = tf.maximum(v * c["beta_2_t"], tf.abs(grad))
            return w + c["neg_scaled_lr"] * (m / (v + c["epsilon"])), m, v
        return _apply_rows(var, [self.get_slot(var, "m"), self.get_slot(var, "v")], step,
                           indices)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay,
                      beta_1=self._serialize_hyperparameter("beta_1"),
                      beta_2=self._serialize_hyperparameter("beta_2"), epsilon=self.epsilon)
        return config


# --- Nadam --------------------------------------------------------------------------------
@tf_export("keras.optimizers.Nadam", "keras.optimizers.legacy.Nadam")
class Nadam(OptimizerV2):
    """Nadam (Adam with Nesterov momentum), as Keras writes it: the momentum schedule
    mu_t = beta_1 * (1 - 0.5 * 0.96^(schedule_decay * t)) is accumulated in the
    'momentum_cache' weight, and
        m = beta_1 * m + (1 - beta_1) * g;  v = beta_2 * v + (1 - beta_2) * g^2
        m_bar = (1 - mu_t) * g / (1 - prod mu) + mu_{t+1} * m / (1 - prod mu * mu_{t+1})
        w = w - lr * m_bar / (sqrt(v / (1 - beta_2^t)) + epsilon)

    Args:
      learning_rate: a float or tensor (default 0.001).
      beta_1, beta_2: the decays (0.9, 0.999).
      epsilon: default 1e-7.
      name: the name scope (default 'Nadam').
      **kwargs: clipvalue, clipnorm, global_clipnorm, lr, schedule_decay (default 0.004;
        it replaces `decay`).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name: str = "Nadam", **kwargs):
        kwargs["decay"] = kwargs.pop("schedule_decay", 0.004)
        super().__init__(name, **kwargs)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = epsilon or backend.epsilon()
        self._m_cache = None
        self._m_cache_read = None

    def _create_slots(self, var_list) -> None:
        if self._m_cache is None:
            self._m_cache = self.add_weight("momentum_cache", shape=[],
                                            dtype=var_list[0].dtype.base_dtype,
                                            initializer="ones", trainable=False)
            self._weights.append(self._m_cache)
        self._add_slots(var_list, "m", "v")

    def _prepare(self, var_list) -> dict:
        self._m_cache_read = tf.identity(self._m_cache)
        return super()._prepare(var_list)

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        lr_t = tf.identity(self._get_hyper("learning_rate", var_dtype))
        beta_1_t = tf.identity(self._get_hyper("beta_1", var_dtype))
        beta_2_t = tf.identity(self._get_hyper("beta_2", var_dtype))
        local_step = tf.cast(self.iterations + 1, var_dtype)
        next_step = tf.cast(self.iterations + 2, var_dtype)
        decay_base = tf.cast(0.96, var_dtype)
        m_t = beta_1_t * (1.0 - 0.5 * tf.pow(decay_base, self._initial_decay * local_step))
        m_t_1 = beta_1_t * (1.0 - 0.5 * tf.pow(decay_base, self._initial_decay * next_step))
        m_schedule_new = tf.cast(self._m_cache_read, var_dtype) * m_t
        if var_dtype == self._m_cache.dtype.base_dtype:
            m_schedule_new = tf.identity(self._m_cache.assign(m_schedule_new))
        m_schedule_next = m_schedule_new * m_t_1
        apply_state[(var_device, var_dtype)] = dict(
            lr_t=lr_t, neg_lr_t=-lr_t, epsilon=tf.convert_to_tensor(self.epsilon, var_dtype),
            beta_1_t=beta_1_t, beta_2_t=beta_2_t, m_t=m_t, m_t_1=m_t_1,
            one_minus_beta_1_t=1 - beta_1_t, one_minus_beta_2_t=1 - beta_2_t,
            one_minus_m_t=1.0 - m_t, one_minus_m_schedule_new=1.0 - m_schedule_new,
            one_minus_m_schedule_next=1.0 - m_schedule_next,
            v_t_prime_denominator=1.0 - tf.pow(beta_2_t, local_step))

    def _resource_apply_dense(self, grad, var, apply_state=None):
        c = self._coefficients(var, apply_state)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / c["one_minus_m_schedule_new"]
        m_t = m.assign(c["beta_1_t"] * m + c["one_minus_beta_1_t"] * grad)
        m_t_prime = m_t / c["one_minus_m_schedule_next"]
        v_t = v.assign(c["beta_2_t"] * v + c["one_minus_beta_2_t"] * tf.square(grad))
        v_t_prime = v_t / c["v_t_prime_denominator"]
        m_t_bar = c["one_minus_m_t"] * g_prime + c["m_t_1"] * m_t_prime
        var_t = var - c["lr_t"] * m_t_bar / (tf.sqrt(v_t_prime) + c["epsilon"])
        return var.assign(var_t).op

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        c = self._coefficients(var, apply_state)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / c["one_minus_m_schedule_new"]
        m_t = m.assign(m * c["beta_1_t"])
        with tf.control_dependencies([m_t]):
            m_t = _scatter_add_read(m, indices, grad * c["one_minus_beta_1_t"])
            m_t_slice = tf.gather(m_t, indices)
        m_t_bar = c["one_minus_m_t"] * g_prime + \
            c["m_t_1"] * (m_t_slice / c["one_minus_m_schedule_next"])
        v_t = v.assign(v * c["beta_2_t"])
        with tf.control_dependencies([v_t]):
            v_t = _scatter_add_read(v, indices, (grad * grad) * c["one_minus_beta_2_t"])
            v_t_slice = tf.gather(v_t, indices)
        v_t_prime = v_t_slice / c["v_t_prime_denominator"]
        var_update = _ops.scatter_add(
            var, indices, c["neg_lr_t"] * m_t_bar / (tf.sqrt(v_t_prime) + c["epsilon"]))
        return tf.group(var_update, m_t_bar, v_t)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(learning_rate=self._serialize_hyperparameter("learning_rate"),
                      decay=self._initial_decay,
                      beta_1=self._serialize_hyperparameter("beta_1"),
                      beta_2=self._serialize_hyperparameter("beta_2"), epsilon=self.epsilon)
        return config


# --- Ftrl ---------------------------------------------------------------------------------
@tf_export("keras.optimizers.Ftrl", "keras.optimizers.legacy.Ftrl")
class Ftrl(OptimizerV2):
    """FTRL-Proximal (TF's ApplyFtrl, ApplyFtrlV2 with l2 shrinkage; the step of
    tf.train.FtrlOptimizer), the L2 strength raised by `beta / (2 * learning_rate)`.

    Args:
      learning_rate: a float, tensor or callable (default 0.001).
      learning_rate_power: <= 0 (default -0.5).
      initial_accumulator_value: the accumulators' start (0.1), >= 0.
      l1_regularization_strength, l2_regularization_strength: >= 0.
      name: the name scope (default 'Ftrl').
      l2_shrinkage_regularization_strength: >= 0, a penalty on the magnitude of the
        weights added to the gradient.
      beta: the L2 strength added as beta / (2 * learning_rate).
      **kwargs: clipvalue, clipnorm, global_clipnorm, decay, lr.

    Raises:
      ValueError: an argument out of its range.
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name: str = "Ftrl",
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        super().__init__(name, **kwargs)
        for what, value in (("initial_accumulator_value", initial_accumulator_value),
                            ("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength",
                             l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError("`%s` needs to be positive or zero. Received: %s=%s."
                                 % (what, what, value))
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             "learning_rate_power=%s." % learning_rate_power)
        self._set_learning_rate_and_decay(learning_rate, kwargs)
        self._set_hyper("learning_rate_power", learning_rate_power)
        self._set_hyper("l1_regularization_strength", l1_regularization_strength)
        self._set_hyper("l2_regularization_strength", l2_regularization_strength)
        self._set_hyper("beta", beta)
        self._initial_accumulator_value = initial_accumulator_value
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength

    def _create_slots(self, var_list) -> None:
        for var in var_list:
            init = tf.constant_initializer(self._initial_accumulator_value,
                                           dtype=var.dtype.base_dtype)
            self.add_slot(var, "accumulator", init)
            self.add_slot(var, "linear")

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        super()._prepare_local(var_device, var_dtype, apply_state)
        c = apply_state[(var_device, var_dtype)]
        for key in ("learning_rate_power", "l1_regularization_strength",
                    "l2_regularization_strength", "beta"):
            c[key] = tf.identity(self._get_hyper(key, var_dtype))
        c["adjusted_l2"] = c["l2_regularization_strength"] + c["beta"] / (2.0 * c["lr_t"])
        c["l2_shrinkage"] = tf.cast(self._l2_shrinkage_regularization_strength, var_dtype)

    def _update(self, grad, var, apply_state, indices=None):
        c = self._coefficients(var, apply_state)
        shrinkage = c["l2_shrinkage"] if self._l2_shrinkage_regularization_strength > 0 \
            else None

        def step(w, accum, linear):
            return ftrl_step(grad, w, accum, linear, c["lr_t"],
                             c["l1_regularization_strength"], c["adjusted_l2"],
                             c["learning_rate_power"], shrinkage)
        slots = [self.get_slot(var, "accumulator"), self.get_slot(var, "linear")]
        return _apply_rows(var, slots, step, indices)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        return self._update(grad, var, apply_state)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        return self._update(grad, var, apply_state, indices)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            learning_rate=self._serialize_hyperparameter("learning_rate"),
            decay=self._initial_decay,
            initial_accumulator_value=self._initial_accumulator_value,
            learning_rate_power=self._serialize_hyperparameter("learning_rate_power"),
            l1_regularization_strength=self._serialize_hyperparameter(
                "l1_regularization_strength"),
            l2_regularization_strength=self._serialize_hyperparameter(
                "l2_regularization_strength"),
            beta=self._serialize_hyperparameter("beta"),
            l2_shrinkage_regularization_strength=self._l2_shrinkage_regularization_strength)
        return config


# --- get / serialize / deserialize --------------------------------------------------------
_ALL_CLASSES = {"adadelta": Adadelta, "adagrad": Adagrad, "adam": Adam, "adamax": Adamax,
                "ftrl": Ftrl, "nadam": Nadam, "rmsprop": RMSprop, "sgd": SGD}


@tf_export("keras.optimizers.serialize")
def serialize(optimizer, use_legacy_format: bool = False) -> dict:
    """{'class_name': the optimizer's class name, 'config': its config}."""
    return serialization.serialize_object(optimizer)


@tf_export("keras.optimizers.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None, **kwargs):
    """The optimizer a {'class_name', 'config'} dict describes (class names of the
    built-in optimizers in any case: 'adam', 'Adam', 'RMSprop').

    Raises:
      ValueError: an unknown class name.
    """
    if isinstance(config, dict) and isinstance(config.get("class_name"), str) and \
            config["class_name"].lower() in _ALL_CLASSES:
        config = dict(config, class_name=config["class_name"].lower())
    return serialization.deserialize_object(config, _ALL_CLASSES, custom_objects,
                                            "optimizer")


@tf_export("keras.optimizers.get")
def get(identifier, **kwargs):
    """A Keras optimizer: an optimizer is returned as is, a TF1 tf.train.Optimizer is
    wrapped (as Keras wraps it in graph mode), a name ('adam') or config is made.

    Raises:
      TypeError: unknown keyword arguments.
      ValueError: an identifier that is none of these.
    """
    kwargs.pop("use_legacy_optimizer", None)
    if kwargs:
        raise TypeError("Invalid keyword arguments: %s" % (kwargs,))
    if isinstance(identifier, (OptimizerV2, TFOptimizer)):
        return identifier
    if isinstance(identifier, tf.train.Optimizer):
        return TFOptimizer(identifier)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    raise ValueError("Could not interpret optimizer identifier: %s" % (identifier,))


def __getattr__(name: str):
    # names that TF 2.15's compat.v1 tf.keras.optimizers does not have either (AdamW, ...)
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        "tf.keras.optimizers.%s is not supported by tensorweave; the Keras optimizers it "
        "has are %s (or use a tf.train optimizer, which Model.compile accepts)"
        % (name, ", ".join(sorted(c.__name__ for c in _ALL_CLASSES.values()))))
