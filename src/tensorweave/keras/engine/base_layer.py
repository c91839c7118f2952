"""`tf.keras.layers.Layer`: the base of Keras layers, with TF's Keras semantics in v1
graph mode (which differ from `tf.layers.Layer`'s):

* names are unique per graph counting from 0 (`dense`, `dense_1`, ...);
* each call opens the name scope of the layer's name (uniquified: `dense`, `dense_1`,
  ...), and the variables are created on the first call in that scope as resource
  variables (`dense/kernel:0`); variable scopes and their reuse play no part, but a
  variable scope's name scope prefixes the names (`foo/dense/kernel:0`);
* weight regularization and activity losses are in `layer.losses` only (not in
  REGULARIZATION_LOSSES), updates (batch norm's) in `layer.updates` only (not in
  UPDATE_OPS): TF's Keras leaves both to the training loop;
* `training` not given to a call comes from the enclosing layer call (a Model's);
  layers that need one and get None use `backend.learning_phase()`;
* a call on Keras tensors (from `Input`) records a Node (node.py), which functional
  Models are made of;
* masks flow as TF's: the inputs' `_keras_mask` is passed to `call(mask=)` when it
  takes one, and the outputs get `compute_mask`'s (masking.py);
* a functional model's `add_loss` of a tensor computed from its inputs becomes layers
  of the model (add_loss.py), so that calling the model again adds the loss again.

It derives from tf.layers' Layer so that the Keras layers can reuse the tf.layers
layers' `build`/`call` (`class Dense(tf_layers.Dense, keras.Layer)`): this class sits
below them in the method order and replaces the naming, scoping, weights and calling.
"""
from __future__ import annotations

import functools
import inspect
from typing import List, Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, constraints, initializers, regularizers
from tensorweave.keras.engine import base_layer_utils as utils
from tensorweave.keras.engine import input_spec as input_spec_lib
from tensorweave.keras.engine import masking
from tensorweave.keras.engine import node as node_module
from tensorweave.keras.engine.base_layer_utils import call_context
from tensorweave.layers import base as layers_base
from tensorweave.ops.state.variables import VariableAggregation, VariableSynchronization


def _masks_of(tensors):
    """The Keras mask of each of a list of tensors, or of one tensor (None where none)."""
    if isinstance(tensors, list):
        return [masking.get_mask(x) for x in tensors]
    return masking.get_mask(tensors)


def _default(method):
    """Marks a base-class method that subclasses are expected to override (`build`): the
    base `_maybe_build` skips calling it when not overridden, as TF does."""
    method._is_default = True
    return method


@tf_export("keras.layers.Layer")
class Layer(layers_base.Layer):
    """Base class of Keras layers (TF's `tf.keras.layers.Layer` in v1 graph mode).

    Subclasses create weights in `build(input_shape)` with `add_weight` and compute the
    output in `call(inputs, ...)`; sublayers assigned as attributes are tracked (their
    weights, losses and updates are the parent's too).

    Args:
      trainable: whether the weights are trainable (also set on sublayers).
      name: the layer's name (unique from the class name when None).
      dtype: the dtype of the weights (default: the dtype of the first input).
      dynamic: must be False (eager-only layers are not supported).
      **kwargs: input_shape, batch_input_shape, batch_size, input_dim (used when the
        layer starts a Sequential model), weights (initial values set after the build),
        activity_regularizer.

    Raises:
      TypeError: an unknown keyword argument.
      NotImplementedError: dynamic=True.
    """

    _ALLOWED_KWARGS = frozenset({"input_dim", "input_shape", "batch_input_shape",
                                 "batch_size", "weights", "activity_regularizer",
                                 "autocast", "implementation"})
    # attributes that are not sublayers even when they hold layers
    _NON_CHILD_ATTRS = frozenset({"_inbound_nodes", "_outbound_nodes", "_network_layers",
                                  "_input_layers", "_output_layers", "_layer_list"})

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype=None,
                 dynamic: bool = False, **kwargs):
        for key in kwargs:
            if key not in self._ALLOWED_KWARGS:
                raise TypeError("Keyword argument not understood:", key)
        if dynamic:
            raise NotImplementedError("dynamic=True layers run eagerly, which tensorweave's "
                                      "tf.keras (graph mode only) does not support")
        self._trainable = bool(trainable)
        self._stateful = False
        self.built = False
        self._build_input_shape = None
        self._input_spec = None
        self.supports_masking = False
        self._init_set_name(name)
        self._activity_regularizer = regularizers.get(kwargs.pop("activity_regularizer", None))
        self._trainable_weights: List = []
        self._non_trainable_weights: List = []
        self._updates: List = []
        self._update_inputs: dict = {}  # id(update op) -> the call inputs it was made from
        self._losses: List = []
        self._conditional_losses: set = set()
        self._callable_losses: List = []
        self._metrics: List = []  # the Metric objects of `add_metric`
        if dtype is None and utils.v2_dtype_behavior_enabled():
            dtype = backend.floatx()
        self._dtype = None if dtype is None else tf.as_dtype(dtype).base_dtype
        self._autocast = bool(kwargs.get("autocast", utils.v2_dtype_behavior_enabled()))
        self._inbound_nodes: List = []
        self._outbound_nodes: List = []
        self._call_spec = None
        # what tf.layers' properties read
        self._graph = None
        self._scope = None
        self._reuse = None
        if "input_dim" in kwargs and "input_shape" not in kwargs:
            kwargs["input_shape"] = (kwargs["input_dim"],)
        if "batch_input_shape" in kwargs:
            self._batch_input_shape = tuple(kwargs["batch_input_shape"])
        elif "input_shape" in kwargs:
            self._batch_input_shape = ((kwargs.get("batch_size"),) +
                                       tuple(kwargs["input_shape"]))
        self._initial_weights = kwargs.get("weights")

    def _init_set_name(self, name, zero_based: bool = True) -> None:
        if not name:
            self._name = backend.unique_object_name(
                utils.to_snake_case(type(self).__name__), zero_based=zero_based)
        elif isinstance(name, str):
            self._name = name
        else:
            raise TypeError("Expected `name` argument to be a string, but got: %s" % (name,))

    # --- attribute tracking --------------------------------------------------------------
    def __setattr__(self, name, value):
        # a variable assigned as an attribute is a weight of the layer, as in TF
        if isinstance(value, tf.Variable) and "_trainable_weights" in self.__dict__ and \
                not name.startswith(("_trainable_weights", "_non_trainable_weights")):
            target = self._trainable_weights if value.trainable else \
                self._non_trainable_weights
            if all(value is not w for w in self._trainable_weights +
                   self._non_trainable_weights):
                target.append(value)
                backend.track_variable(value)
        super().__setattr__(name, value)

    def _flatten_children(self) -> list:
        """The direct sublayers: layers held by attributes (also in lists, tuples and
        dicts, a dict's by sorted key as `nest.flatten` orders them, as TF), in the
        order the attributes were first set."""
        found, seen = [], {id(self)}

        def visit(value):
            if isinstance(value, layers_base.Layer):
                if id(value) not in seen:
                    seen.add(id(value))
                    found.append(value)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v)
            elif isinstance(value, dict):
                try:
                    keys = sorted(value)
                except TypeError:  # keys of mixed types: as they come
                    keys = list(value)
                for key in keys:
                    visit(value[key])

        for key, value in self.__dict__.items():
            if key not in self._NON_CHILD_ATTRS:
                visit(value)
        return found

    def _flatten_layers(self, include_self: bool = True) -> list:
        """This layer (optionally) and all its sublayers, depth first."""
        out, seen = [], set()

        def walk(layer):
            if id(layer) in seen:
                return
            seen.add(id(layer))
            out.append(layer)
            if isinstance(layer, Layer):
                for child in layer._flatten_children():
                    walk(child)

        walk(self)
        return out if include_self else out[1:]

    # --- properties ----------------------------------------------------------------------
    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for child in self._flatten_children():
            child.trainable = value

    @property
    def stateful(self) -> bool:
        return any(getattr(layer, "_stateful", False) for layer in self._flatten_layers())

    @stateful.setter
    def stateful(self, value: bool) -> None:
        self._stateful = value

    @property
    def dynamic(self) -> bool:
        return False

    @property
    def compute_dtype(self):
        """The dtype of the layer's computations: its dtype (no mixed precision)."""
        return self.dtype

    @property
    def input_spec(self):
        return self._input_spec

    @input_spec.setter
    def input_spec(self, value) -> None:
        for v in tf.nest.flatten(value):
            if v is not None and "InputSpec" not in type(v).__name__:
                raise TypeError("Layer input_spec must be an instance of InputSpec. Got: %s"
                                % (v,))
        self._input_spec = value

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @activity_regularizer.setter
    def activity_regularizer(self, regularizer) -> None:
        self._activity_regularizer = regularizer

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        children = [w for c in self._flatten_children() for w in c.trainable_weights]
        return utils.dedup(self._trainable_weights + children)

    @property
    def non_trainable_weights(self) -> list:
        children = self._flatten_children()
        if self.trainable:
            nested = [w for c in children for w in c.non_trainable_weights]
            return utils.dedup(self._non_trainable_weights + nested)
        nested = [w for c in children for w in c.weights]
        return utils.dedup(self._trainable_weights + self._non_trainable_weights + nested)

    @property
    def weights(self) -> list:
        return utils.dedup(self.trainable_weights + self.non_trainable_weights)

    trainable_variables = property(lambda self: self.trainable_weights)
    non_trainable_variables = property(lambda self: self.non_trainable_weights)
    variables = property(lambda self: self.weights)

    @property
    def losses(self) -> list:
        """The layer's and its sublayers' losses; weight regularization losses are built
        anew at each access (in scope '<variable>/Regularizer'), as TF's are."""
        collected = []
        for layer in self._flatten_layers():
            collected.extend(layer._losses)
            for fn in getattr(layer, "_callable_losses", ()):
                loss = fn()
                if loss is not None:
                    collected.append(loss)
        return collected

    @property
    def updates(self) -> list:
        """The update ops of the layer and its sublayers (batch norm's moving averages);
        run them with the train op: TF's Keras does not put them in UPDATE_OPS."""
        collected = []
        for layer in self._flatten_layers():
            if not layer.trainable and not getattr(layer, "_stateful", False):
                continue
            collected.extend(layer._updates)
        return collected

    # --- what subclasses override --------------------------------------------------------
    @_default
    def build(self, input_shape) -> None:
        """Creates the weights (subclasses override it); marks the layer built."""
        if not hasattr(self.build, "_is_default"):
            self._build_input_shape = input_shape
        self.built = True

    def call(self, inputs, **kwargs):
        """The computation (subclasses override it); the base returns `inputs`."""
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError("Please run in eager mode or implement the "
                                  "compute_output_shape method on your layer (%s)."
                                  % type(self).__name__)

    @_default
    def compute_mask(self, inputs, mask=None):
        """The output mask for `inputs` with input mask `mask`: `mask` itself when the
        layer supports masking, else None.

        Raises:
          TypeError: a mask for a layer that does not support masking.
        """
        if not self.supports_masking:
            if any(m is not None for m in tf.nest.flatten(mask)):
                raise TypeError("Layer " + self.name + " does not support masking, but was "
                                "passed an input_mask: " + str(mask))
            return None
        return mask

    def get_config(self) -> dict:
        """{'name', 'trainable', 'dtype'} (and 'batch_input_shape' when given); layers
        with constructor arguments add theirs.

        Raises:
          NotImplementedError: a subclass whose `__init__` takes other arguments and
            that does not override `get_config` (its config could not rebuild it).
        """
        config = {"name": self.name, "trainable": self.trainable}
        if hasattr(self, "_batch_input_shape"):
            config["batch_input_shape"] = self._batch_input_shape
        config["dtype"] = self.dtype
        if type(self).get_config is Layer.get_config and \
                _extra_init_args(type(self), config):
            raise NotImplementedError("Layers with arguments in `__init__` must override "
                                      "`get_config`.")
        return config

    @classmethod
    def from_config(cls, config: dict):
        """The layer `cls(**config)`."""
        return cls(**config)

    # --- weights, losses, updates --------------------------------------------------------
    def add_weight(self, name: Optional[str] = None, shape=None, dtype=None, initializer=None,
                   regularizer=None, trainable: Optional[bool] = None, constraint=None,
                   partitioner=None, use_resource=None,
                   synchronization=VariableSynchronization.AUTO,
                   aggregation=VariableAggregation.NONE, **kwargs):
        """Creates a resource variable `name` in the current name scope (the layer's,
        during its first call) and adds it to the layer's weights.

        Args:
          name: the variable's name.
          shape: its shape (default: scalar).
          dtype: its dtype (default: the layer's, else floatx()).
          initializer: an initializer or its name (default glorot_uniform for floats,
            zeros for integers and bools).
          regularizer: a regularizer or its name; its loss is in `layer.losses`.
          trainable: default True (False for ON_READ synchronization).
          constraint: a constraint or its name (applied by optimizers).
          partitioner: not supported (NotImplementedError when given).
          use_resource: accepted (Keras variables are resource variables).
          synchronization, aggregation: as `tf.Variable`.
          **kwargs: getter, collections, caching_device, experimental_autocast.

        Returns:
          The Variable.

        Raises:
          TypeError: an unknown keyword argument.
          ValueError: trainable with ON_READ synchronization; no initializer for a
            dtype that has no default.
        """
        if shape is None:
            shape = ()
        for key in kwargs:
            if key not in ("getter", "collections", "experimental_autocast",
                           "caching_device"):
                raise TypeError("Unknown keyword argument:", key)
        getter = kwargs.pop("getter", None)
        dtype = tf.as_dtype(dtype or self.dtype or backend.floatx())
        if self._dtype is None:
            self._dtype = dtype.base_dtype
        initializer = initializers.get(initializer)
        regularizer = regularizers.get(regularizer)
        constraint = constraints.get(constraint)
        trainable = layers_base.weight_trainable(synchronization, trainable)
        if initializer is None:
            if dtype.is_floating:
                initializer = initializers.get("glorot_uniform")
            elif dtype.is_integer or dtype.is_unsigned or dtype.is_bool:
                initializer = tf.zeros_initializer()
            elif getter is None:
                raise ValueError("An initializer for variable %s of type %s is required for "
                                 "layer %s" % (name, dtype.base_dtype, self.name))
        variable = (getter or utils.make_variable)(
            name=name, shape=shape, dtype=dtype, initializer=initializer,
            trainable=trainable, constraint=constraint, partitioner=partitioner,
            use_resource=use_resource, collections=kwargs.get("collections"),
            synchronization=synchronization, aggregation=aggregation,
            caching_device=kwargs.get("caching_device"))
        if regularizer is not None:
            self._handle_weight_regularization(variable.name.split(":")[0], variable,
                                               regularizer)
        backend.track_variable(variable)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        return variable

    def add_variable(self, *args, **kwargs):
        """Deprecated alias of `add_weight`."""
        return self.add_weight(*args, **kwargs)

    def _handle_weight_regularization(self, name: str, variable, regularizer) -> None:
        def loss_for_variable():
            with tf.name_scope(name + "/Regularizer"):
                return regularizer(variable)
        self.add_loss(loss_for_variable)

    def add_loss(self, losses, inputs=None) -> None:
        """Adds loss tensors (or zero-argument callables, evaluated at each `losses`
        access) to the layer; they are not put in REGULARIZATION_LOSSES (as TF's Keras).
        A functional model's loss tensor added outside a call becomes layers of the
        model (add_loss.py), computed again when the model is called on new inputs.

        Args:
          losses: a loss, a callable, or a list of them.
          inputs: the inputs the losses depend on (None: unconditional losses).
        """
        for loss in tf.nest.flatten(losses):
            if callable(loss):
                self._callable_losses.append(functools.partial(utils.call_loss, loss))
                continue
            if loss is None:
                continue
            if not isinstance(loss, tf.Tensor):
                loss = tf.convert_to_tensor(loss, dtype=backend.floatx())
            if getattr(self, "_is_graph_network", False) and not call_context().in_call:
                from tensorweave.keras.engine.add_loss import graph_network_add_loss
                graph_network_add_loss(self, loss)
                continue
            self._losses.append(loss)
            if inputs is not None:
                self._conditional_losses.add(id(loss))

    def add_metric(self, value, aggregation=None, name=None) -> None:
        """Adds a metric the Keras training loop reports (and resets each epoch): with
        aggregation='mean', the mean of `value` over the batches (a Mean metric named
        `name`); with None, `value` must be what calling a Metric object returned. A
        functional model's metric added outside a call becomes a layer of the model.

        Raises:
          ValueError: another aggregation, no name, a value that is not a tensor
            outside a call, or an aggregated value not made by a Metric.
        """
        from tensorweave.keras.engine import add_loss
        add_loss.add_metric(self, value, aggregation, name, call_context().in_call)

    def add_update(self, updates, inputs=None) -> None:
        """Adds update ops (or callables making them, called now) to `layer.updates`."""
        context = call_context()
        for update in tf.nest.flatten(updates):
            while callable(update):
                update = update()
            if isinstance(update, tf.Operation):
                op = update
            elif hasattr(update, "op"):
                op = update.op
            else:
                op = tf.convert_to_tensor(update).op
            self._updates.append(op)
            if context.in_call:
                self._update_inputs[id(op)] = tf.nest.flatten(context.inputs)

    def get_updates_for(self, inputs) -> list:
        """With None: the updates that do not depend on the inputs of the call that made
        them; else the updates that depend on `inputs`."""
        if inputs is None:
            return [u for u in self.updates if not layers_base.depends_on(
                u, self._update_inputs_of(u))]
        flat = tf.nest.flatten(inputs)
        return [u for u in self.updates if layers_base.depends_on(u, flat)]

    def _update_inputs_of(self, op) -> list:
        for layer in self._flatten_layers():
            found = getattr(layer, "_update_inputs", {}).get(id(op))
            if found is not None:
                return found
        return []

    def get_losses_for(self, inputs) -> list:
        """With None: the losses added without inputs (weight regularization); else the
        losses added with inputs that depend on `inputs` (activity regularization)."""
        conditional = set()
        for layer in self._flatten_layers():
            conditional |= getattr(layer, "_conditional_losses", set())
        losses = self.losses
        if inputs is None:
            return [x for x in losses if id(x) not in conditional]
        flat = tf.nest.flatten(inputs)
        return [x for x in losses if id(x) in conditional and layers_base.depends_on(x.op, flat)]

    # the weights in Keras' session, and their count: as tf.layers' layers
    get_weights = layers_base.Layer.get_weights
    set_weights = layers_base.Layer.set_weights
    count_params = layers_base.Layer.count_params

    # --- calling -------------------------------------------------------------------------
    def _name_scope(self) -> str:
        return self.name

    def _get_call_spec(self):
        if self._call_spec is None:
            params = list(inspect.signature(self.call).parameters.values())
            names = [p.name for p in params
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
            self._call_spec = (names, "training" in names or var_kw, "mask" in names or var_kw)
        return self._call_spec

    @property
    def _expects_training_arg(self) -> bool:
        return self._get_call_spec()[1]

    @property
    def _expects_mask_arg(self) -> bool:
        return self._get_call_spec()[2]

    def _mask_passed(self, args, kwargs):
        """(whether `mask` was given to the call, its value)."""
        if "mask" in kwargs:
            return True, kwargs["mask"]
        names = self._get_call_spec()[0]
        position = names.index("mask") - 1 if "mask" in names[1:] else None
        if position is not None and len(args) > position:
            return True, args[position]
        return False, None

    def _training_position(self) -> Optional[int]:
        """The index of `training` in a call's positional arguments after the inputs."""
        names = self._get_call_spec()[0]
        return names.index("training") - 1 if "training" in names[1:] else None

    def _training_passed(self, args, kwargs) -> bool:
        if "training" in kwargs:
            return True
        position = self._training_position()
        return position is not None and len(args) > position

    def _training_value(self, args, kwargs):
        if "training" in kwargs:
            return kwargs["training"]
        return args[self._training_position()]

    def _set_training(self, value, args, kwargs, pop_if_none: bool = False):
        position = self._training_position()
        if position is not None and len(args) > position:
            args = args[:position] + (value,) + args[position + 1:]
        elif value is None and pop_if_none:
            kwargs.pop("training", None)
        else:
            kwargs["training"] = value
        return args, kwargs

    def __call__(self, *args, **kwargs):
        """Builds the layer on its first call (weights in its name scope), then its
        output for the inputs; see the module docstring for names and `training`.

        Raises:
          RuntimeError: `super().__init__()` was not called.
          ValueError: no inputs, inputs incompatible with `input_spec`, or a `call`
            that returns None.
        """
        if "_trainable_weights" not in self.__dict__:
            raise RuntimeError("You must call `super().__init__()` in the layer constructor.")
        names = self._get_call_spec()[0]
        if args:
            inputs, args = args[0], args[1:]
        elif names and names[0] in kwargs:
            inputs = kwargs.pop(names[0])
        else:
            raise ValueError("The first argument to `Layer.call` must always be passed.")
        inputs = tf.nest.map_structure(utils.to_tensor, inputs)
        training = None
        if self._training_passed(args, kwargs):
            training = self._training_value(args, kwargs)
            if not self._expects_training_arg:
                kwargs.pop("training")
        by_framework = False
        if training is None:
            training = call_context().training
            if self._expects_training_arg and training is not None:
                training = tf.cast(training, tf.bool) if isinstance(training, tf.Tensor) \
                    else bool(training)
                args, kwargs = self._set_training(training, args, kwargs)
                by_framework = True
        mask_given, input_masks = self._mask_passed(args, kwargs)
        mask_by_framework = False
        if not mask_given:
            input_masks = masking.input_masks(inputs)
            if self._expects_mask_arg and input_masks is not None:
                kwargs["mask"] = input_masks
                mask_by_framework = True
        if node_module.needs_keras_history(inputs):
            node_module.create_keras_history(inputs)
        context = call_context()
        context.frames.append((self, inputs, training))
        try:
            input_spec_lib.assert_input_compatibility(self.input_spec, inputs, self.name)
            with tf.name_scope(self._name_scope()):
                self._maybe_build(inputs)
                outputs = self.call(self._maybe_cast_inputs(inputs), *args, **kwargs)
                if outputs is None:
                    raise ValueError("A layer's `call` method should return a Tensor or a "
                                     "list of Tensors, not None (layer: " + self.name + ").")
                if node_module.have_all_keras_metadata(inputs):
                    if by_framework:
                        args, kwargs = self._set_training(None, args, kwargs,
                                                          pop_if_none=True)
                    if mask_by_framework:
                        kwargs.pop("mask")
                    outputs = self._set_connectivity_metadata((inputs,) + tuple(args),
                                                              kwargs, outputs)
                self._handle_activity_regularization(inputs, outputs)
                masking.set_output_masks(self, inputs, outputs, input_masks)
        finally:
            context.frames.pop()
        return outputs

    def _maybe_cast_inputs(self, inputs):
        """With autocast (the V2 dtype behavior), the floating tensors of `inputs` cast
        to a floating layer dtype; else `inputs`."""
        if not (self._autocast and self._dtype is not None and self._dtype.is_floating):
            return inputs

        def cast(x):
            if isinstance(x, (tf.Tensor, tf.SparseTensor)) and x.dtype.is_floating and \
                    x.dtype.base_dtype != self._dtype:
                return tf.cast(x, self._dtype)
            return x
        return tf.nest.map_structure(cast, inputs)

    def _maybe_build(self, inputs) -> None:
        if self.built:
            return
        flat = tf.nest.flatten(inputs)
        if self._dtype is None and flat and hasattr(flat[0], "dtype"):
            self._dtype = tf.as_dtype(flat[0].dtype).base_dtype
        shapes = None
        if all(hasattr(x, "shape") for x in flat):
            shapes = tf.nest.map_structure(lambda x: tf.TensorShape(x.shape), inputs)
        if not hasattr(self.build, "_is_default"):
            self.build(shapes)
        Layer.build(self, shapes)
        if self._initial_weights is not None:
            with tf.init_scope():
                self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _set_connectivity_metadata(self, args, kwargs, outputs):
        """Records the call as a Node; an input returned unchanged is copied first so
        that it keeps its own history."""
        flat_inputs = set(id(x) for x in tf.nest.flatten((args, kwargs)))

        def copy_if_input(t):
            if id(t) in flat_inputs:
                with tf.name_scope(self.name):
                    return tf.identity(t)
            return t

        outputs = tf.nest.map_structure(copy_if_input, outputs)
        node_module.Node(self, call_args=args, call_kwargs=kwargs, outputs=outputs)
        return outputs

    def _handle_activity_regularization(self, inputs, outputs) -> None:
        if not self._activity_regularizer:
            return
        with tf.name_scope("ActivityRegularizer"):
            for output in tf.nest.flatten(outputs):
                loss = tf.convert_to_tensor(self._activity_regularizer(output))
                batch_size = tf.cast(tf.shape(output)[0], loss.dtype)
                self.add_loss(loss / batch_size, inputs=inputs)

    # --- connectivity --------------------------------------------------------------------
    @property
    def inbound_nodes(self) -> list:
        return self._inbound_nodes

    @property
    def outbound_nodes(self) -> list:
        return self._outbound_nodes

    def _node_attribute(self, node_index: int, attr: str, attr_name: str):
        if not self._inbound_nodes:
            raise RuntimeError("The layer %s has never been called and thus has no defined "
                               "%s." % (self.name, attr_name))
        if len(self._inbound_nodes) <= node_index:
            raise ValueError("Asked to get %s at node %d, but the layer has only %d inbound "
                             "nodes." % (attr_name, node_index, len(self._inbound_nodes)))
        values = getattr(self._inbound_nodes[node_index], attr)
        if isinstance(values, list) and len(values) == 1:
            return values[0]
        return values

    def get_input_at(self, node_index: int):
        """The input tensor(s) of the layer's `node_index`-th call on Keras tensors."""
        return self._node_attribute(node_index, "input_tensors", "input")

    def get_output_at(self, node_index: int):
        """The output tensor(s) of the layer's `node_index`-th call on Keras tensors."""
        return self._node_attribute(node_index, "output_tensors", "output")

    def get_input_shape_at(self, node_index: int):
        return self._node_attribute(node_index, "input_shapes", "input shape")

    def get_output_shape_at(self, node_index: int):
        return self._node_attribute(node_index, "output_shapes", "output shape")

    @property
    def input(self):
        """The input of the layer's first call on Keras tensors.

        Raises:
          AttributeError: the layer was never called on Keras tensors.
        """
        if not self._inbound_nodes:
            raise AttributeError("Layer " + self.name + " is not connected, no input to "
                                 "return.")
        return self._node_attribute(0, "input_tensors", "input")

    @property
    def output(self):
        """The output of the layer's first call on Keras tensors.

        Raises:
          AttributeError: the layer was never called on Keras tensors.
        """
        if not self._inbound_nodes:
            raise AttributeError("Layer " + self.name + " has no inbound nodes.")
        return self._node_attribute(0, "output_tensors", "output")

    @property
    def input_shape(self):
        """The input shape (tuple) of the layer's calls on Keras tensors.

        Raises:
          AttributeError: never called, or called on inputs of different shapes.
        """
        if not self._inbound_nodes:
            raise AttributeError('The layer "%s" has never been called and thus has no '
                                 "defined input shape. Note that the `input_shape` property "
                                 "is only available for Functional and Sequential models."
                                 % self.name)
        shapes = set(str(node.input_shapes) for node in self._inbound_nodes)
        if len(shapes) == 1:
            return self._inbound_nodes[0].input_shapes
        # sic: TF's message has no closing quote after the name
        raise AttributeError('The layer "%s has multiple inbound nodes, with different input '
                             'shapes. Hence the notion of "input shape" is ill-defined for the '
                             "layer. Use `get_input_shape_at(node_index)` instead." % self.name)

    @property
    def output_shape(self):
        """The output shape (tuple) of the layer's calls on Keras tensors.

        Raises:
          AttributeError: never called, or called with outputs of different shapes.
        """
        if not self._inbound_nodes:
            raise AttributeError("The layer has never been called and thus has no defined "
                                 "output shape.")
        shapes = set(str(node.output_shapes) for node in self._inbound_nodes)
        if len(shapes) == 1:
            return self._inbound_nodes[0].output_shapes
        raise AttributeError('The layer "%s" has multiple inbound nodes, with different '
                             'output shapes. Hence the notion of "output shape" is ill-defined '
                             "for the layer. Use `get_output_shape_at(node_index)` instead."
                             % self.name)

    def get_input_mask_at(self, node_index: int):
        """The mask(s) of the inputs of the layer's `node_index`-th call on Keras
        tensors."""
        return _masks_of(self.get_input_at(node_index))

    def get_output_mask_at(self, node_index: int):
        """The mask(s) of the outputs of the layer's `node_index`-th call on Keras
        tensors."""
        return _masks_of(self.get_output_at(node_index))

    @property
    def input_mask(self):
        """The mask(s) of `input` (None where a tensor has none).

        Raises:
          AttributeError: the layer was never called on Keras tensors.
        """
        return _masks_of(self.input)

    @property
    def output_mask(self):
        """The mask(s) of `output` (None where a tensor has none).

        Raises:
          AttributeError: the layer was never called on Keras tensors.
        """
        return _masks_of(self.output)


def _extra_init_args(cls, config: dict) -> list:
    """The named arguments of `cls.__init__` that the base config does not hold."""
    names = inspect.getfullargspec(cls.__init__).args[1:]
    return [n for n in names if n not in config and n != "dynamic"]
