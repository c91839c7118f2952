"""The base of `tf.keras.optimizers`: TF 2.15's legacy `OptimizerV2`, which is what
`tf.keras.optimizers.Adam` (and the others) resolve to under `tf.disable_v2_behavior()`,
and the wrapper Keras puts around a TF1 `tf.train.Optimizer` given to `compile`.

As TF's Keras runs it in graph mode:

* hyperparameters given as Python numbers become float32 variables ('learning_rate',
  'decay', 'beta_1', ...) when first needed, so `optimizer.lr = 0.01` or
  `K.set_value(optimizer.lr, 0.01)` changes them between steps (`lr` is an alias of
  `learning_rate`); callables are called when the update is built; a
  `LearningRateSchedule` learning rate is called with `iterations` (and stays the
  schedule when read as `optimizer.lr`; configs hold its serialized form);
* `iterations` is an int64 variable ('iter') that every apply increments after the
  variable updates; `decay` divides the learning rate by `1 + decay * iterations`;
* slots are variables '<variable>/<slot>' made on the first apply; `weights` holds
  `iterations` then the slots, in creation order; the Keras session initializes all;
* gradients are clipped by value (clipvalue), then by norm per variable (clipnorm) or
  by global norm (global_clipnorm); a variable's constraint is applied after its update;
* `get_updates(loss, params)` (what `Model.fit` uses) raises for a variable without a
  gradient; `apply_gradients` only warns and skips it.

Subclasses (optimizers.py) write the update of one variable in `_resource_apply_dense`
and `_resource_apply_sparse` (IndexedSlices gradients, duplicate indices summed first),
reading their coefficients from the `apply_state` that `_prepare_local` fills.
"""
from __future__ import annotations

import functools
import logging
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, initializers
from tensorweave.keras import learning_rate_schedule as schedules
from tensorweave.keras.engine import base_layer_utils
from tensorweave.train.optimizer import _deduplicate_indexed_slices

_ALLOWED_KWARGS = ("clipnorm", "clipvalue", "lr", "decay", "global_clipnorm")


def _is_tensor_or_variable(x) -> bool:
    return isinstance(x, (tf.Tensor, tf.Variable))


@tf_export("keras.optimizers.Optimizer", "keras.optimizers.legacy.Optimizer")
class OptimizerV2:
    """Base class of the Keras optimizers (TF's legacy OptimizerV2, graph mode).

    Args:
      name: the name scope of the optimizer's variables and ops.
      gradient_aggregator: not supported (it aggregates across replicas).
      gradient_transformers: functions of the (gradient, variable) pairs, applied after
        clipping.
      **kwargs: clipvalue, clipnorm, global_clipnorm (gradient clipping), decay (inverse
        time decay of the learning rate), lr (alias of learning_rate).

    Raises:
      TypeError: an unknown keyword argument.
      ValueError: a negative keyword argument, or both clipnorm and global_clipnorm.
      NotImplementedError: a gradient_aggregator.
    """

    def __init__(self, name: str, gradient_aggregator=None, gradient_transformers=None,
                 **kwargs):
        for key, value in kwargs.items():
            if key not in _ALLOWED_KWARGS:
                raise TypeError("Unexpected keyword argument passed to optimizer: %s. "
                                "Allowed kwargs are %s." % (key, set(_ALLOWED_KWARGS)))
            if value is not None and value < 0:
                raise ValueError("Expected %s >= 0, received: %s" % (key, value))
        if gradient_aggregator is not None:
            raise NotImplementedError("OptimizerV2(gradient_aggregator=...) is not supported "
                                      "by tensorweave (it aggregates gradients across "
                                      "replicas of a distribution strategy)")
        self._use_locking = True
        self._name = name
        self._hyper = {}
        self._slots = {}  # id(variable) -> {slot name: slot variable}
        self._slot_names = []
        self._weights = []
        self._iterations = None
        decay = kwargs.pop("decay", 0.0)
        if decay < 0.0:
            raise ValueError("decay cannot be less than 0. Received: decay=%s." % decay)
        self._initial_decay = decay
        self._hypers_created = False
        self.gradient_transformers = list(gradient_transformers or [])
        self.clipnorm = kwargs.pop("clipnorm", None)
        self.global_clipnorm = kwargs.pop("global_clipnorm", None)
        if self.clipnorm is not None and self.global_clipnorm is not None:
            raise ValueError("Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                             "`clipnorm`=%s, `global_clipnorm`=%s."
                             % (self.clipnorm, self.global_clipnorm))
        self.clipvalue = kwargs.pop("clipvalue", None)

    # --- clipping ------------------------------------------------------------------------
    def _check_no_transformers(self, what: str, value) -> None:
        if value is not None and self.gradient_transformers:
            raise ValueError("`%s` cannot be set when `gradient_transformers` is set. Instead, "
                             "use the `gradient_transformers` to specify clipping and other "
                             "transformations. Received: val=%s, gradient_transformers=%s."
                             % (what, value, self.gradient_transformers))

    @property
    def clipnorm(self):
        """The maximum norm of each gradient, or None."""
        return self._clipnorm

    @clipnorm.setter
    def clipnorm(self, value) -> None:
        self._check_no_transformers("clipnorm", value)
        self._clipnorm = value

    @property
    def global_clipnorm(self):
        """The maximum global norm of all gradients, or None."""
        return self._global_clipnorm

    @global_clipnorm.setter
    def global_clipnorm(self, value) -> None:
        self._check_no_transformers("global_clipnorm", value)
        self._global_clipnorm = value

    @property
    def clipvalue(self):
        """The bound of every gradient value, or None."""
        return self._clipvalue

    @clipvalue.setter
    def clipvalue(self, value) -> None:
        self._check_no_transformers("clipvalue", value)
        self._clipvalue = value

    def _transform_gradients(self, grads_and_vars):
        if self._clipvalue is not None:
            grads_and_vars = [(tf.clip_by_value(g, -self._clipvalue, self._clipvalue), v)
                              for g, v in grads_and_vars]
        if self._clipnorm is not None:
            grads_and_vars = [(tf.clip_by_norm(g, self._clipnorm), v)
                              for g, v in grads_and_vars]
        if self._global_clipnorm is not None:
            grads, variables = zip(*grads_and_vars)
            clipped, _ = tf.clip_by_global_norm(list(grads), self._global_clipnorm)
            grads_and_vars = list(zip(clipped, variables))
        for fn in self.gradient_transformers:
            grads_and_vars = fn(grads_and_vars)
        return grads_and_vars

    # --- hyperparameters -----------------------------------------------------------------
    def _set_hyper(self, name: str, value) -> None:
        """Sets hyperparameter `name`: a number, tensor or callable replaces the current
        value; once the value is a variable, a new value is assigned to it."""
        if name not in self._hyper:
            self._hyper[name] = value
            return
        previous = self._hyper[name]
        if callable(previous) or isinstance(previous, (tf.Tensor, int, float)) or \
                isinstance(value, schedules.LearningRateSchedule):
            self._hyper[name] = value
        else:
            backend.set_value(previous, value)

    def _get_hyper(self, name: str, dtype=None):
        """Hyperparameter `name` (its variable once made), called if callable, cast to
        `dtype` if given."""
        if not self._hypers_created:
            self._create_hypers()
        value = self._hyper[name]
        if isinstance(value, schedules.LearningRateSchedule):
            return value
        if callable(value):
            value = value()
        if dtype:
            return tf.cast(value, dtype)
        return value

    def _create_hypers(self) -> None:
        if self._hypers_created:
            return
        for name, value in sorted(self._hyper.items()):
            if _is_tensor_or_variable(value) or callable(value):
                continue
            self._hyper[name] = self.add_weight(name, shape=[], trainable=False,
                                                initializer=value)
        self._hypers_created = True

    def __getattr__(self, name: str):
        # only reached when normal lookup fails: hyperparameters read as attributes
        hyper = self.__dict__.get("_hyper")
        if hyper is not None and not name.startswith("__"):
            key = "learning_rate" if name == "lr" else name
            if key in hyper:
                return self._get_hyper(key)
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__,
                                                                   name))

    def __setattr__(self, name: str, value) -> None:
        if name == "lr":
            name = "learning_rate"
        if "_hyper" in self.__dict__ and name in self._hyper:
            self._set_hyper(name, value)
        else:
            object.__setattr__(self, name, value)

    def __dir__(self):
        names = set(super().__dir__()) | set(self._hyper)
        if "learning_rate" in self._hyper:
            names.add("lr")
        return sorted(names)

    def _decayed_lr(self, var_dtype):
        """The learning rate in `var_dtype`, divided by `1 + decay * iterations` when the
        optimizer has a decay."""
        lr_t = self._get_hyper("learning_rate", var_dtype)
        if isinstance(lr_t, schedules.LearningRateSchedule):
            lr_t = tf.cast(lr_t(self.iterations), var_dtype)
        if self._initial_decay > 0.0:
            local_step = tf.cast(self.iterations, var_dtype)
            decay_t = tf.cast(self._initial_decay, var_dtype)
            lr_t = lr_t / (1.0 + decay_t * local_step)
        return lr_t

    def _serialize_hyperparameter(self, name: str):
        value = self._hyper[name]
        if isinstance(value, schedules.LearningRateSchedule):
            return schedules.serialize(value)
        if callable(value):
            return value()
        if _is_tensor_or_variable(value):
            return backend.get_value(value)
        return value

    # --- variables -----------------------------------------------------------------------
    @property
    def iterations(self):
        """The int64 variable counting the applied updates ('iter')."""
        if self._iterations is None:
            self._iterations = self.add_weight("iter", shape=[], dtype=tf.int64,
                                               trainable=False)
            self._weights.append(self._iterations)
        return self._iterations

    @iterations.setter
    def iterations(self, variable) -> None:
        if self._iterations is not None:
            raise RuntimeError("Cannot set `iterations` to a new Variable after the Optimizer "
                               "weights have been created. Here it is attempting to set "
                               "`iterations` to %s." % (variable,))
        self._iterations = variable
        self._weights.append(variable)

    def add_weight(self, name: str, shape, dtype=None, initializer="zeros",
                   trainable: Optional[bool] = None):
        """A resource variable `name` of the optimizer (in the current name scope),
        initialized by the Keras session."""
        dtype = tf.as_dtype(dtype or tf.float32)
        if isinstance(initializer, str) or callable(initializer):
            initializer = initializers.get(initializer)
        variable = base_layer_utils.make_variable(
            name, shape=shape, dtype=dtype, initializer=initializer,
            trainable=True if trainable is None else trainable, use_resource=True)
        backend.track_variable(variable)
        return variable

    def add_slot(self, var, slot_name: str, initializer="zeros", shape=None):
        """The slot `slot_name` of `var` ('<var>/<slot_name>'), made on first use with
        `initializer` (a name, an initializer, or a value) and `var`'s shape and dtype."""
        if slot_name not in self._slot_names:
            self._slot_names.append(slot_name)
        slot_dict = self._slots.setdefault(id(var), {})
        weight = slot_dict.get(slot_name)
        if weight is None:
            if isinstance(initializer, str) or callable(initializer):
                initializer = initializers.get(initializer)
                slot_shape = var.shape if shape is None else shape
                initial_value = functools.partial(initializer, slot_shape,
                                                  dtype=var.dtype.base_dtype)
            else:
                initial_value = initializer
            with tf.colocate_with(var):
                weight = tf.Variable(initial_value, name="%s/%s" % (var._shared_name,
                                                                   slot_name),
                                     dtype=var.dtype.base_dtype, trainable=False,
                                     use_resource=True)
            backend.track_variable(weight)
            slot_dict[slot_name] = weight
            self._weights.append(weight)
        return weight

    def get_slot(self, var, slot_name: str):
        """The slot variable `slot_name` of `var`.

        Raises:
          KeyError: no such slot.
        """
        return self._slots[id(var)][slot_name]

    def get_slot_names(self) -> list:
        """The names of the slots this optimizer makes."""
        return list(self._slot_names)

    def _create_slots(self, var_list) -> None:
        pass

    def _create_all_weights(self, var_list) -> None:
        _ = self.iterations
        self._create_hypers()
        self._create_slots(var_list)

    def variables(self) -> list:
        """`iterations` and the slots, in creation order."""
        return self._weights

    @property
    def weights(self) -> list:
        """`iterations` and the slots, in creation order."""
        return self._weights

    def _set_learning_rate_and_decay(self, learning_rate, kwargs: dict) -> None:
        """The hyperparameters every Keras optimizer has: `learning_rate` (or its old
        name `lr`, which wins as in Keras) and `decay`."""
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)

    def _add_slots(self, var_list, *names: str) -> None:
        """Zero-initialized slots `names` for each variable, slot by slot (Keras'
        order of the optimizer's weights)."""
        for name in names:
            for var in var_list:
                self.add_slot(var, name)

    def get_weights(self) -> list:
        """The values of `weights` (NumPy arrays), from the Keras session."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        """Sets the values of `weights` (iterations first).

        Raises:
          ValueError: a different number of values, or a value of another shape.
        """
        params = self.weights
        if len(params) != len(weights):
            raise ValueError("You called `set_weights(weights)` on optimizer %s with a  weight "
                             "list of length %d, but the optimizer was expecting %d weights. "
                             "Provided weights: %s..." % (self._name, len(weights),
                                                          len(params), str(weights)[:50]))
        if not params:
            return
        pairs = []
        for current, param, value in zip(backend.batch_get_value(params), params, weights):
            if current.shape != tuple(getattr(value, "shape", ())):
                raise ValueError("Optimizer weight shape %s not compatible with provided "
                                 "weight shape %s." % (current.shape,
                                                       getattr(value, "shape", ())))
            pairs.append((param, value))
        backend.batch_set_value(pairs)

    # --- building the update -------------------------------------------------------------
    def get_gradients(self, loss, params) -> list:
        """The gradients of `loss` for `params` (graph mode).

        Raises:
          ValueError: a parameter without a gradient.
        """
        params = tf.nest.flatten(params)
        with tf.name_scope(self._name + "/gradients"):
            grads = tf.gradients(loss, params)
        for grad, param in zip(grads, params):
            if grad is None:
                raise ValueError("Variable {} has `None` for gradient. Please make sure that all "
                                 "of your ops have a gradient defined (i.e. are "
                                 "differentiable). Common ops without gradient: K.argmax, "
                                 "K.round, K.eval.".format(param))
        return grads

    def get_updates(self, loss, params) -> list:
        """[the op applying the gradients of `loss` to `params`] (what Keras' training
        loop runs)."""
        grads = self.get_gradients(loss, params)
        return [self.apply_gradients(list(zip(grads, params)))]

    def minimize(self, loss, var_list, grad_loss=None, name: Optional[str] = None, tape=None):
        """Applies the gradients of `loss()` for `var_list` (both may be callables).

        Raises:
          ValueError: a Tensor loss without a tape (as TF).
          NotImplementedError: a GradientTape (eager execution).
        """
        if tape is not None:
            raise NotImplementedError("OptimizerV2.minimize(tape=...) needs a GradientTape, "
                                      "which tensorweave (graph mode) does not have; pass "
                                      "the loss as a callable")
        if not callable(loss):
            raise ValueError("`tape` is required when a `Tensor` loss is passed. Received: "
                             "loss=%s, tape=%s." % (loss, tape))
        loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = tf.nest.flatten(var_list)
        with tf.name_scope(self._name + "/gradients"):
            grads = tf.gradients(loss, var_list, grad_ys=grad_loss)
        return self.apply_gradients(list(zip(grads, var_list)), name=name)

    def apply_gradients(self, grads_and_vars, name: Optional[str] = None,
                        experimental_aggregate_gradients: bool = True):
        """The op applying (gradient, variable) pairs, then incrementing `iterations` (a
        no-op for no pairs).

        Raises:
          ValueError: pairs none of which has a gradient.
        """
        grads_and_vars = _filter_empty_gradients(grads_and_vars)
        var_list = [v for _, v in grads_and_vars]
        with tf.name_scope(self._name):
            with tf.init_scope():
                self._create_all_weights(var_list)
            if not grads_and_vars:
                return tf.no_op()
            apply_state = self._prepare(var_list)
            grads_and_vars = self._transform_gradients(grads_and_vars)
            update_ops = []
            with tf.name_scope(name or self._name):
                for grad, var in grads_and_vars:
                    with tf.name_scope("update_" + var.op.name), tf.colocate_with(var):
                        update_ops.append(self._apply_one(grad, var, apply_state))
                with tf.control_dependencies([tf.group(*update_ops)]):
                    return self.iterations.assign_add(1, read_value=False)

    def _apply_one(self, grad, var, apply_state):
        if isinstance(grad, tf.IndexedSlices):
            if var.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable. "
                                   "Received: grad=%s, var.constraint=%s."
                                   % (grad, var.constraint))
            return self._resource_apply_sparse_duplicate_indices(
                grad.values, var, grad.indices, apply_state=apply_state)
        update_op = self._resource_apply_dense(grad, var, apply_state=apply_state)
        if var.constraint is None:
            return update_op
        with tf.control_dependencies([update_op]):
            return var.assign(var.constraint(var))

    def _prepare(self, var_list) -> dict:
        keys = {(var.device, var.dtype.base_dtype) for var in var_list}
        apply_state = {}
        for var_device, var_dtype in sorted(keys, key=lambda k: (k[0], k[1].name)):
            apply_state[(var_device, var_dtype)] = {}
            with tf.device(var_device):
                self._prepare_local(var_device, var_dtype, apply_state)
        return apply_state

    def _prepare_local(self, var_device, var_dtype, apply_state) -> None:
        if "learning_rate" in self._hyper:
            lr_t = tf.identity(self._decayed_lr(var_dtype))
            apply_state[(var_device, var_dtype)]["lr_t"] = lr_t

    def _fallback_apply_state(self, var_device, var_dtype) -> dict:
        apply_state = {(var_device, var_dtype): {}}
        self._prepare_local(var_device, var_dtype, apply_state)
        return apply_state[(var_device, var_dtype)]

    def _coefficients(self, var, apply_state) -> dict:
        key = (var.device, var.dtype.base_dtype)
        return (apply_state or {}).get(key) or self._fallback_apply_state(*key)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        raise NotImplementedError("Must be implemented in subclasses.")

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices, **kwargs):
        summed_grad, unique_indices = _deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed_grad, var, unique_indices, **kwargs)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        raise NotImplementedError("Must be implemented in subclasses.")

    # --- configuration -------------------------------------------------------------------
    def get_config(self) -> dict:
        """{'name', and the clipping arguments given}; subclasses add theirs."""
        config = {"name": self._name}
        for key in ("clipnorm", "clipvalue", "global_clipnorm"):
            if getattr(self, key) is not None:
                config[key] = getattr(self, key)
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """The optimizer `cls(**config)` ('lr' read as 'learning_rate', a serialized
        schedule deserialized)."""
        config = dict(config)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"],
                                                            custom_objects=custom_objects)
        return cls(**config)


def _filter_empty_gradients(grads_and_vars) -> list:
    grads_and_vars = list(grads_and_vars)
    if not grads_and_vars:
        return grads_and_vars
    kept = [(g, v) for g, v in grads_and_vars if g is not None]
    if not kept:
        raise ValueError("No gradients provided for any variable: %s. Provided "
                         "`grads_and_vars` is %s." % ([v.name for _, v in grads_and_vars],
                                                      grads_and_vars))
    missing = [v.name for g, v in grads_and_vars if g is None]
    if missing:
        logging.getLogger("tensorweave").warning(
            "Gradients do not exist for variables %s when minimizing the loss. If you're "
            "using `model.compile()`, did you forget to provide a `loss` argument?", missing)
    return kept


class TFOptimizer:
    """A TF1 `tf.train.Optimizer` given to `Model.compile`, as Keras wraps it: its
    updates come from `compute_gradients` and `apply_gradients(global_step=iterations)`,
    and the Keras session initializes its slots.

    Args:
      optimizer: the tf.train.Optimizer.
      iterations: the step variable (default: a new int64 'iterations' variable).
    """

    def __init__(self, optimizer, iterations=None):
        self.optimizer = optimizer
        if iterations is None:
            with tf.name_scope(type(self).__name__):
                iterations = backend.variable(0, dtype="int64", name="iterations")
        self.iterations = iterations

    def get_updates(self, loss, params) -> list:
        """[the increment of `iterations`] without params, else [the TF1 optimizer's
        apply op]."""
        if not params:
            return [tf.assign_add(self.iterations, 1)]
        grads = self.optimizer.compute_gradients(loss, params)
        update = self.optimizer.apply_gradients(grads, global_step=self.iterations)
        for variable in self.optimizer.variables():
            backend.track_variable(variable)
        return [update]

    def apply_gradients(self, grads_and_vars):
        """The TF1 optimizer's apply op, with `iterations` as its global step."""
        return self.optimizer.apply_gradients(grads_and_vars, global_step=self.iterations)

    @property
    def weights(self):
        raise NotImplementedError("The weights of a wrapped tf.train optimizer are not "
                                  "available; use optimizer.optimizer.variables()")

    def get_config(self):
        raise NotImplementedError("A wrapped tf.train optimizer has no Keras config")
