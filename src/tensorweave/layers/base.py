"""`tf.layers.Layer` and `tf.layers.InputSpec`: the base of TF1's layers.

A Layer owns a variable scope, opened lazily on its first call: with a name it is that
scope (`dense`), without one a unique scope from the snake-cased class name (`dense`,
`dense_1`, ...), so checkpoints of TF1 programs map by name. Variables are created with
`tf.get_variable` inside that scope by `build` (once, on the first call); later calls
re-enter the scope with reuse=True. Ops go to the scope's original name scope.
Regularization losses (weights and activity) go to REGULARIZATION_LOSSES, updates made
during a call (batch norm's moving averages) to UPDATE_OPS.
"""
from __future__ import annotations

import re
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor, name_scope
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
    """The Python value of a bool or bool tensor when known at build time, else None."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, (int, np.integer)) and pred in (0, 1):
        return bool(pred)
    if isinstance(pred, Tensor):
        if pred.dtype.base_dtype != _dt.bool:
            raise TypeError("`training` must be a Python bool or a bool tensor, got a %s "
                            "tensor" % pred.dtype.name)
        value = tensor_util.constant_value(pred)
        return None if value is None else bool(value)
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


def _check_input_spec(layer, spec: InputSpec, x: Tensor) -> None:
    shape = x.shape
    ndim = shape.ndims
    who = "Input 0 of layer %s is incompatible with the layer: " % layer.name
    if spec.ndim is not None and ndim is not None and ndim != spec.ndim:
        raise ValueError(who + "expected ndim=%d, found ndim=%d. Full shape received: %s"
                         % (spec.ndim, ndim, shape.as_list()))
    if spec.max_ndim is not None and ndim is not None and ndim > spec.max_ndim:
        raise ValueError(who + "expected max_ndim=%d, found ndim=%d"
                         % (spec.max_ndim, ndim))
    if spec.min_ndim is not None and ndim is not None and ndim < spec.min_ndim:
        raise ValueError(who + "expected min_ndim=%d, found ndim=%d. Full shape received: "
                         "%s" % (spec.min_ndim, ndim, shape.as_list()))
    if spec.dtype is not None and x.dtype.base_dtype.name != _dt.as_dtype(spec.dtype).name:
        raise ValueError(who + "expected dtype=%s, found dtype=%s"
                         % (spec.dtype, x.dtype.name))
    if spec.axes and ndim is not None:
        dims = shape.as_list()
        for axis, size in spec.axes.items():
            actual = dims[int(axis)]
            if size is not None and actual is not None and actual != size:
                raise ValueError(who + "expected axis %d of input shape to have value %d "
                                 "but received input with shape %s" % (axis, size, dims))
    if spec.shape is not None and ndim is not None:
        for expected, actual in zip(spec.shape, shape.as_list()):
            if expected is not None and actual is not None and expected != actual:
                raise ValueError(who + "expected shape=%s, found shape=%s"
                                 % (spec.shape, shape.as_list()))


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
        return list(self._losses)

    @property
    def updates(self) -> list:
        return list(self._updates)

    # --- what subclasses override --------------------------------------------------------
    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError("Layer %s does not implement compute_output_shape"
                                  % type(self).__name__)

    def get_config(self) -> dict:
        config = {"name": self.name, "trainable": self.trainable}
        if self._dtype is not None:
            config["dtype"] = self.dtype
        return config

    # --- state ---------------------------------------------------------------------------
    def add_loss(self, losses, inputs=None) -> None:
        """Adds loss tensors to the layer and to REGULARIZATION_LOSSES (as TF1)."""
        losses = list(losses) if isinstance(losses, (list, tuple)) else [losses]
        for loss in losses:
            if callable(loss):
                loss = loss()
            if loss is None:
                continue
            self._losses.append(loss)
            _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, updates, inputs=None) -> None:
        """Adds update ops, run with the train op via UPDATE_OPS (added at the end of the
        call that made them)."""
        updates = list(updates) if isinstance(updates, (list, tuple)) else [updates]
        for u in updates:
            u = u() if callable(u) else u
            # as TF's layers: an update is kept (and put in UPDATE_OPS) as its op
            self._updates.append(u.op if isinstance(u, _graph.Tensor) else u)

    def get_losses_for(self, inputs) -> list:
        return self.losses

    def get_updates_for(self, inputs) -> list:
        return self.updates

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
        if synchronization is VariableSynchronization.ON_READ:
            if trainable:
                raise ValueError("Synchronization value can be set to "
                                 "VariableSynchronization.ON_READ only for non-trainable "
                                 "variables. You have specified trainable=True and "
                                 "synchronization=VariableSynchronization.ON_READ.")
            trainable = False
        elif trainable is None:
            trainable = True
        dtype = _dt.as_dtype(dtype or self._dtype or _dt.float32)
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
                    with name_scope(name + "/Regularizer"):
                        self.add_loss(regularizer(variable))
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
        updates_before = len(self._updates)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
            self._current_scope = vscope
            with name_scope(self._name_scope()):
                if not self.built:
                    if self._dtype is None and isinstance(first, Tensor):
                        base = first.dtype.base_dtype
                        self._dtype = base if base.is_floating else _dt.float32
                    self._assert_input_compatibility(inputs)
                    input_shapes = [x.shape for x in inputs] if isinstance(
                        inputs, (list, tuple)) else inputs.shape
                    self.build(input_shapes)
                    self.built = True
                else:
                    self._assert_input_compatibility(inputs)
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    self._handle_activity_regularization(outputs)
        for update in self._updates[updates_before:]:
            _graph.add_to_collection(GraphKeys.UPDATE_OPS, update)
        return outputs

    def _assert_input_compatibility(self, inputs) -> None:
        if self.input_spec is None:
            return
        specs = self.input_spec if isinstance(self.input_spec, (list, tuple)) else \
            [self.input_spec]
        xs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        for spec, x in zip(specs, xs):
            if spec is not None and isinstance(x, Tensor):
                _check_input_spec(self, spec, x)

    def _handle_activity_regularization(self, outputs) -> None:
        from tensorweave.ops.array.array_ops import shape as shape_op
        from tensorweave.ops.math.math_ops import cast
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for out in outs:
            with name_scope("ActivityRegularizer"):
                loss = self._activity_regularizer(out)
                batch = cast(shape_op(out)[0], loss.dtype.base_dtype)
                self.add_loss(loss / batch)


def _to_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def shape_list(shape) -> list:
    """The dims of a TensorShape (unknown dims as None); ValueError for an unknown rank."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        raise ValueError("The rank of the input must be known")
    return shape.as_list()
