"""`tf.layers.Layer` and `tf.layers.InputSpec`: the base of TF1's layers.

A Layer owns a variable scope, opened lazily on its first call: with a name it is that
scope (`dense`), without one a unique scope from the snake-cased class name (`dense`,
`dense_1`, ...), so checkpoints of TF1 programs map by name. Variables are created with
`tf.get_variable` inside that scope by `build` (once, on the first call); later calls
re-enter the scope with reuse=True. Ops go to the scope's original name scope.
Regularization losses (weights and activity) go to REGULARIZATION_LOSSES, updates made
during a call (batch norm's moving averages) to UPDATE_OPS, except for a layer made with
trainable=False, whose `updates` are empty (TF1's frozen batch norm).
"""
from __future__ import annotations

import re
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor, name_scope, upstream_ops
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.state import variable_scope as vs
from tensorweave.ops.state.variables import VariableSynchronization


def to_snake_case(name: str) -> str:
    """'Conv2DTranspose' -> 'conv2d_transpose' (Keras' rule, which TF1 layers use)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return snake if snake[0] != "_" else "private" + snake


def _unique_layer_name(base: str) -> str:
    """`base_1`, `base_2`, ... per graph: the `name` of an unnamed layer. As in TF1 it
    counts from 1 while the variable scope counts from 0 (`dense_1` owns `dense/kernel`)."""
    g = _graph.get_default_graph()
    counts = g.__dict__.setdefault("_tensorweave_layer_names", {})
    counts[base] = counts.get(base, 0) + 1
    return "%s_%d" % (base, counts[base])


def smart_cond(pred, true_fn, false_fn, name: Optional[str] = None):
    """`true_fn()` or `false_fn()` when `pred` is a Python bool or a tensor whose value
    is known at build time; else `tf.cond(pred, true_fn, false_fn)`."""
    value = constant_bool(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    from tensorweave.ops.control_flow.control_flow_ops import cond
    return cond(pred, true_fn, false_fn, name=name)


def constant_bool(pred) -> Optional[bool]:
    """The Python value of a bool, or of a tensor when known at build time (any dtype, as
    TF's smart_cond); None for a bool tensor known only at run time.

    Raises:
      TypeError: a non-bool tensor whose value is unknown (tf.cond would refuse it), or
        some other object.
    """
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, (int, np.integer)) and pred in (0, 1):
        return bool(pred)
    if isinstance(pred, Tensor):
        value = tensor_util.constant_value(pred)
        if value is not None:
            return bool(value)  # as TF's smart_cond, whatever the tensor's dtype
        if pred.dtype.base_dtype != _dt.bool:
            raise TypeError("`training` must be a Python bool or a bool tensor, got a %s "
                            "tensor" % pred.dtype.name)
        return None
    if hasattr(pred, "dtype") and hasattr(pred, "op"):  # a Variable
        return None
    raise TypeError("`training` must be a Python bool or a bool tensor, got %r" % (pred,))


@tf_export("layers.InputSpec")
class InputSpec:
    """What a layer accepts (TF1 `tf.layers.InputSpec`): dtype, rank bounds, and the
    sizes of given axes.

    Args:
      dtype: the expected dtype, or None.
      shape: the expected shape (None entries match anything), or None.
      ndim: the exact rank, or None.
      max_ndim: the largest rank, or None.
      min_ndim: the smallest rank, or None.
      axes: {axis: size} that must match, or None.
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = dtype
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = axes or {}

    def __repr__(self):
        spec = [("dtype=" + str(self.dtype)) if self.dtype else "",
                ("shape=" + str(self.shape)) if self.shape else "",
                ("ndim=" + str(self.ndim)) if self.ndim else "",
                ("max_ndim=" + str(self.max_ndim)) if self.max_ndim else "",
                ("min_ndim=" + str(self.min_ndim)) if self.min_ndim else "",
                ("axes=" + str(self.axes)) if self.axes else ""]
        return "InputSpec(%s)" % ", ".join(x for x in spec if x)


def display_shape(shape) -> str:
    """A shape as TF 2's layers print it in messages: '(None, 5, 3)', '<unknown>'."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        return "<unknown>"
    return str(tuple(shape.as_list()))


def _check_input_spec(layer, spec: InputSpec, x: Tensor, index: int) -> None:
    shape = x.shape
    ndim = shape.ndims
    who = 'Input %d of layer "%s" is incompatible with the layer: ' % (index, layer.name)
    if spec.ndim is not None and ndim is not None and ndim != spec.ndim:
        raise ValueError(who + "expected ndim=%d, found ndim=%d. Full shape received: %s"
                         % (spec.ndim, ndim, display_shape(shape)))
    if spec.max_ndim is not None and ndim is not None and ndim > spec.max_ndim:
        raise ValueError(who + "expected max_ndim=%d, found ndim=%d"
                         % (spec.max_ndim, ndim))
    if spec.min_ndim is not None and ndim is not None and ndim < spec.min_ndim:
        raise ValueError(who + "expected min_ndim=%d, found ndim=%d. Full shape received: "
                         "%s" % (spec.min_ndim, ndim, display_shape(shape)))
    if spec.dtype is not None and x.dtype.base_dtype.name != _dt.as_dtype(spec.dtype).name:
        raise ValueError(who + "expected dtype=%s, found dtype=%s"
                         % (spec.dtype, x.dtype.base_dtype))
    if spec.axes and ndim is not None:
        dims = shape.as_list()
        for axis, size in spec.axes.items():
            actual = dims[int(axis)]
            if size is not None and actual is not None and actual != size:
                raise ValueError(who + "expected axis %d of input shape to have value %d, "
                                 "but received input with shape %s"
                                 % (axis, size, display_shape(shape)))
    if spec.shape is not None and ndim is not None:
        for expected, actual in zip(spec.shape, shape.as_list()):
            if expected is not None and actual is not None and expected != actual:
                raise ValueError(who + "expected shape=%s, found shape=%s"
                                 % (spec.shape, display_shape(shape)))


@tf_export("layers.Layer")
class Layer:
    """Base layer (TF1 `tf.layers.Layer`): a callable that owns variables in a scope.

    Subclasses override `build(input_shape)` (create variables with `add_weight`) and
    `call(inputs, ...)` (build the output); `compute_output_shape` is optional.

    Args:
      trainable: whether the layer's variables go to TRAINABLE_VARIABLES.
      name: the layer's name, which is also its variable scope; unique from the class
        name when None.
      dtype: the dtype of the variables (default: the dtype of the first input).
      activity_regularizer: fn(output) -> loss, added to REGULARIZATION_LOSSES (divided
        by the batch size, as TF1).
      _scope: a variable scope name or VariableScope to use (the functional layers pass
        their `name`).
      _reuse: reuse the variables of the scope (the functional layers' `reuse`).
    """

    def __init__(self, trainable: bool = True, name=None, dtype=None, **kwargs):
        allowed = {"_scope", "_reuse", "activity_regularizer", "input_shape",
                   "batch_input_shape", "batch_size", "weights", "autocast",
                   "dynamic", "input_dim"}
        for key in kwargs:
            if key not in allowed:
                raise TypeError("Keyword argument not understood:", key)
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        self.trainable = trainable
        self.built = False
        self._dtype = None if dtype is None else _dt.as_dtype(dtype).base_dtype
        self.input_spec = None
        self.supports_masking = False
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._losses = []
        self._updates = []
        # zero-argument functions making a loss (weight regularizers): as TF's they are
        # called anew at each `losses` access
        self._callable_losses = []
        # ids of the losses and updates that depend on the inputs of the call that made
        # them (activity regularization, batch norm's moving averages)
        self._conditional_losses = set()
        self._conditional_updates = set()
        self._call_inputs = None
        self._graph = None
        self._current_scope = None
        if isinstance(name, vs.VariableScope):
            self._base_name = name.name
            self._name = _unique_layer_name(to_snake_case(type(self).__name__))
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)
        if scope:
            with vs.variable_scope(scope) as captured:
                self._scope = captured
        else:
            self._scope = None

    # --- properties ----------------------------------------------------------------------
    name = property(lambda self: self._name)
    dtype = property(lambda self: None if self._dtype is None else self._dtype.name)
    graph = property(lambda self: self._graph)
    activity_regularizer = property(lambda self: self._activity_regularizer)

    @property
    def scope_name(self) -> str:
        if not self._scope:
            raise ValueError('No name available for layer scope because the layer "%s" has '
                             "not been used yet. The scope name is determined the first "
                             "time the layer instance is called. You must therefore call "
                             "the layer before querying `scope_name`." % self._name)
        return self._scope.name

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def losses(self) -> list:
        """The losses added with `add_loss`, then the weight regularization losses, which
        are built anew at each access (as TF's, in scope '<weight>/Regularizer')."""
        return list(self._losses) + self._evaluate_callable_losses()

    def _evaluate_callable_losses(self) -> list:
        losses = [fn() for fn in self._callable_losses]
        return [loss for loss in losses if loss is not None]

    @property
    def updates(self) -> list:
        """The update ops; none for a layer that is not trainable, so that a frozen batch
        norm does not move its statistics (TF1)."""
        if not self.trainable and not getattr(self, "_stateful", False):
            return []
        return list(self._updates)

    # TF1 layers are never connected to Keras tensors: these raise as TF's do
    @property
    def input(self):
        raise AttributeError("Layer %s is not connected, no input to return." % self.name)

    @property
    def output(self):
        raise AttributeError("Layer %s has no inbound nodes." % self.name)

    @property
    def input_shape(self):
        raise AttributeError('The layer "%s" has never been called and thus has no defined '
                             "input shape. Note that the `input_shape` property is only "
                             "available for Functional and Sequential models." % self.name)

    @property
    def output_shape(self):
        raise AttributeError("The layer has never been called and thus has no defined output "
                             "shape.")

    # --- what subclasses override --------------------------------------------------------
    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError("Layer %s does not implement compute_output_shape"
                                  % type(self).__name__)

    def get_config(self) -> dict:
        """The layer's constructor arguments: {'name', 'trainable', 'dtype'} here, the
        built-in layers add theirs (initializers serialized as {'class_name', 'config'},
        functions by name, as TF)."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict):
        """The layer `cls(**config)`, the initializers and activation of a `get_config`
        dict deserialized.

        Raises:
          ValueError: a regularizer or constraint given by a name (as TF, which cannot
            look up plain functions such as `tf.nn.l2_loss` by name).
        """
        return cls(**{k: _deserialize(k, v) for k, v in config.items()})

    def _config_with(self, names) -> dict:
        """`Layer.get_config()` plus the attributes `names`, serialized."""
        config = Layer.get_config(self)
        for name in names:
            config[name] = _serialize(name, getattr(self, name))
        return config

    # --- state ---------------------------------------------------------------------------
    def add_loss(self, losses, inputs=None) -> None:
        """Adds losses to the layer and to REGULARIZATION_LOSSES (as TF1).

        Args:
          losses: a loss tensor, a zero-argument function making one (called now for
            the collection and again at each `losses` access), or a list of them.
          inputs: None for losses that do not depend on the layer's inputs (as weight
            regularization), else the inputs they depend on (activity regularization).
        """
        losses = list(losses) if isinstance(losses, (list, tuple)) else [losses]
        for loss in losses:
            if callable(loss):
                self._callable_losses.append(loss)
                loss = loss()
            else:
                if loss is None:
                    continue
                loss = _to_tensor(loss)
                self._losses.append(loss)
                if inputs is not None:
                    self._conditional_losses.add(id(loss))
            if loss is not None:
                _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, updates, inputs=None) -> None:
        """Adds update ops, run with the train op via UPDATE_OPS (added at the end of the
        call that made them)."""
        updates = list(updates) if isinstance(updates, (list, tuple)) else [updates]
        for u in updates:
            u = u() if callable(u) else u
            # as TF's layers: an update is kept (and put in UPDATE_OPS) as its op
            op = u.op if isinstance(u, _graph.Tensor) else u
            self._updates.append(op)
            if self._call_inputs and depends_on(op, self._call_inputs):
                self._conditional_updates.add(id(op))

    def get_losses_for(self, inputs) -> list:
        """With None: the losses that do not depend on the layer's inputs (weight
        regularization, built anew as in `losses`); else those added with inputs that
        depend on `inputs`."""
        if inputs is None:
            return [x for x in self._losses if id(x) not in self._conditional_losses] + \
                self._evaluate_callable_losses()
        flat = nest.flatten(inputs)
        # as TF's, which filters `losses` (building the weight regularizers again)
        return [x for x in self.losses
                if id(x) in self._conditional_losses and depends_on(x.op, flat)]

    def get_updates_for(self, inputs) -> list:
        """With None: the updates that do not depend on the inputs of the call that made
        them; else those that depend on `inputs` (batch norm's moving averages)."""
        if inputs is None:
            return [u for u in self.updates if id(u) not in self._conditional_updates]
        flat = nest.flatten(inputs)
        return [u for u in self.updates
                if id(u) in self._conditional_updates and depends_on(u, flat)]

    def add_variable(self, *args, **kwargs):
        """Deprecated alias of `add_weight` (TF1)."""
        return self.add_weight(*args, **kwargs)

    def count_params(self) -> int:
        """The number of scalars in the layer's weights.

        Raises:
          ValueError: the layer is not built.
        """
        if not self.built:
            raise ValueError("You tried to call `count_params` on %s, but the layer isn't "
                             "built. You can build it manually via: `%s.build("
                             "batch_input_shape)`." % (self.name, self.name))
        return count_weights(self.weights)

    def get_weights(self) -> list:
        """The values of `weights` as NumPy arrays, run (as TF's v1 layers) in Keras'
        session: the default session if there is one, else Keras' own."""
        from tensorweave.keras import backend  # TF's v1 layers run on Keras' backend
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        """Assigns NumPy values to `weights`, in the order of `weights`, in Keras' session
        (see `get_weights`).

        Raises:
          ValueError: a wrong number of values or an incompatible shape.
        """
        from tensorweave.keras import backend
        params = self.weights
        if len(params) != len(weights):
            raise ValueError('You called `set_weights(weights)` on layer "%s" with a weight '
                             "list of length %d, but the layer was expecting %d weights. "
                             "Provided weights: %s..." % (self.name, len(weights),
                                                         len(params), str(weights)[:50]))
        for param, value in zip(params, weights):
            shape = TensorShape(np.shape(value))
            if not param.shape.is_compatible_with(shape):
                raise ValueError("Layer weight shape %s not compatible with provided weight "
                                 "shape %s" % (param.shape, shape))
        backend.batch_set_value(list(zip(params, weights)))

    def add_weight(self, name: str, shape, dtype=None, initializer=None, regularizer=None,
                   trainable: Optional[bool] = None, constraint=None, partitioner=None,
                   use_resource=None, synchronization=None, aggregation=None, getter=None,
                   **kwargs):
        """Creates (or, on reuse, gets) a variable `name` in the layer's scope with
        `tf.get_variable`; a regularizer's loss is added once, when it is created.

        Args:
          name: the variable's name within the layer's scope.
          shape: its shape.
          dtype: its dtype (default: the layer's, else float32).
          initializer: its initializer (default: get_variable's).
          regularizer: fn(variable) -> loss.
          trainable: whether it is trainable (default True, False for ON_READ
            synchronization; always False when the layer is not trainable).
          constraint: fn(value) -> projected value, applied by optimizers.
          partitioner, use_resource, synchronization, aggregation, getter: as
            `tf.get_variable`.

        Returns:
          The Variable.

        Raises:
          TypeError: an unknown keyword argument.
          ValueError: trainable=True with ON_READ synchronization; an existing variable
            created again without reuse.
        """
        for key in kwargs:
            if key != "experimental_autocast":
                raise TypeError("Unknown keyword argument:", key)
        trainable = weight_trainable(synchronization, trainable)
        dtype = _dt.as_dtype(dtype or self._dtype or _dt.float32)
        if self._dtype is None:  # TF: a layer with no dtype yet takes its first weight's
            self._dtype = dtype.base_dtype
        extra = {}
        if synchronization is not None:
            extra["synchronization"] = synchronization
        if aggregation is not None:
            extra["aggregation"] = aggregation
        self._set_scope(None)
        reuse = self.built or self._reuse
        g = _graph.get_default_graph()
        existing = set(id(v) for v in g.get_collection(GraphKeys.GLOBAL_VARIABLES))
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with name_scope(self._name_scope()):
                create = getter or vs.get_variable
                variable = create(name, shape=shape, dtype=dtype, initializer=initializer,
                                  trainable=trainable and self.trainable,
                                  constraint=constraint, partitioner=partitioner,
                                  use_resource=use_resource, **extra)
                if regularizer is not None and id(variable) not in existing:
                    self.add_loss(_regularization_loss(name, variable, regularizer))
        target = self._trainable_weights if trainable else self._non_trainable_weights
        if all(v is not variable for v in self._trainable_weights +
               self._non_trainable_weights):
            target.append(variable)
        return variable

    # --- calling -------------------------------------------------------------------------
    def _name_scope(self) -> str:
        return self._current_scope.original_name_scope

    def _set_scope(self, scope=None) -> None:
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) \
                        as captured:
                    self._scope = captured
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as captured:
                    self._scope = captured

    def apply(self, inputs, *args, **kwargs):
        """Same as calling the layer."""
        return self.__call__(inputs, *args, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call, then its output for `inputs`.

        Args:
          inputs: a Tensor (or a nested structure the subclass's `call` accepts).
          *args, **kwargs: passed to `call`; `scope` picks the variable scope of the
            first call.

        Returns:
          The output of `call`.
        """
        scope = kwargs.pop("scope", None)
        if isinstance(inputs, (list, tuple)):
            inputs = type(inputs)(_to_tensor(x) for x in inputs)
        else:
            inputs = _to_tensor(inputs)
        first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
        g = _graph.get_default_graph()
        if self._graph is not None and self._graph is not g and self.built:
            raise ValueError("Layer %s was used in another graph; a layer's variables live "
                             "in one graph" % self.name)
        self._graph = g
        self._set_scope(scope)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
            self._current_scope = vscope
            with name_scope(self._name_scope()):
                if not self.built:
                    if self._dtype is None and isinstance(first, Tensor):
                        # as TF1: the first input's dtype, whatever it is (Dense refuses
                        # an integer one)
                        self._dtype = first.dtype.base_dtype
                    self._assert_input_compatibility(inputs)
                    input_shapes = [x.shape for x in inputs] if isinstance(
                        inputs, (list, tuple)) else inputs.shape
                    self.build(input_shapes)
                    self.built = True
                else:
                    self._assert_input_compatibility(inputs)
                self._call_inputs = nest.flatten(inputs)
                try:
                    outputs = self.call(inputs, *args, **kwargs)
                finally:
                    self._call_inputs = None
                if self._activity_regularizer is not None:
                    self._handle_activity_regularization(outputs)
        # as TF1, all of `updates` (none when not trainable) not already in UPDATE_OPS
        present = set(id(u) for u in g.get_collection(GraphKeys.UPDATE_OPS))
        for update in self.updates:
            if id(update) not in present:
                _graph.add_to_collection(GraphKeys.UPDATE_OPS, update)
                present.add(id(update))
        return outputs

    def _assert_input_compatibility(self, inputs) -> None:
        if self.input_spec is None:
            return
        specs = self.input_spec if isinstance(self.input_spec, (list, tuple)) else \
            [self.input_spec]
        xs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        for index, (spec, x) in enumerate(zip(specs, xs)):
            if spec is not None and isinstance(x, Tensor):
                _check_input_spec(self, spec, x, index)

    def _handle_activity_regularization(self, outputs) -> None:
        from tensorweave.ops.array.array_ops import shape as shape_op
        from tensorweave.ops.math.math_ops import cast
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for out in outs:
            with name_scope("ActivityRegularizer"):
                loss = self._activity_regularizer(out)
                batch = cast(shape_op(out)[0], loss.dtype.base_dtype)
                self.add_loss(loss / batch, inputs=out)


def count_weights(weights) -> int:
    """The number of scalars in `weights`; a weight listed twice (shared by two layers
    of a model) counts once, an unknown dimension as 0."""
    unique = {id(w): w for w in weights}.values()
    return int(sum(np.prod([d or 0 for d in w.shape.as_list()], dtype=np.int64)
                   for w in unique))


def _regularization_loss(name: str, variable, regularizer):
    """A function making the regularizer's loss of `variable` in scope
    '<name>/Regularizer' (relative to the name scope it is called in, as TF)."""
    def loss():
        with name_scope(name + "/Regularizer"):
            return regularizer(variable)
    return loss


def weight_trainable(synchronization, trainable: Optional[bool]) -> bool:
    """Whether a layer's weight is trainable: by default yes, never when it is read
    synchronized (ON_READ), as a layer's add_weight decides.

    Raises:
      ValueError: trainable=True with ON_READ synchronization.
    """
    if synchronization == VariableSynchronization.ON_READ:
        if trainable:
            raise ValueError("Synchronization value can be set to "
                             "VariableSynchronization.ON_READ only for non-trainable "
                             "variables. You have specified trainable=True and "
                             "synchronization=VariableSynchronization.ON_READ.")
        return False
    return True if trainable is None else trainable


def depends_on(op, tensors) -> bool:
    """Whether `op` is downstream of (data or control edges) one of `tensors`."""
    ops = set(t.op for t in tensors if isinstance(t, Tensor))
    return bool(ops) and not ops.isdisjoint(upstream_ops([op]))


def _serialize(name: str, value):
    """A constructor argument as TF's `get_config` writes it: an activation by name
    ('linear' for None), a function by name, an object with `get_config` as
    {'class_name', 'config'}, other values as they are."""
    if name == "activation" and value is None:
        return "linear"
    if callable(value) and hasattr(value, "get_config"):
        return {"class_name": type(value).__name__, "config": value.get_config()}
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return value


def _deserialize(name: str, value):
    """The inverse of `_serialize` for initializers and activations."""
    if name == "activation" and isinstance(value, str):
        import tensorweave as tf  # the activations are tf.nn's
        if value == "linear":
            return None
        if not hasattr(tf.nn, value):
            raise ValueError("Unknown activation function: '%s'." % value)
        return getattr(tf.nn, value)
    if name.endswith("_initializer") and isinstance(value, dict):
        from tensorweave.ops.state import init_ops
        cls = getattr(init_ops, value.get("class_name", ""), None)
        if cls is None:
            raise ValueError("Unknown initializer: '%s'." % value.get("class_name"))
        return cls.from_config(value.get("config", {}))
    if name.endswith(("_regularizer", "_constraint")) and isinstance(value, str):
        kind = "regularizer" if name.endswith("_regularizer") else "constraint"
        raise ValueError("Unknown %s: '%s'." % (kind, value))
    return value


def _to_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def shape_list(shape) -> list:
    """The dims of a TensorShape (unknown dims as None); ValueError for an unknown rank."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        raise ValueError("The rank of the input must be known")
    return shape.as_list()
