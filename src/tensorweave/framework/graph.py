"""The dataflow graph: Graph, Operation, Tensor, and the scopes that shape new ops.

A Graph holds Operations; an Operation consumes Tensors (outputs of other ops) and
produces Tensors. Scopes on the graph (names, devices, control dependencies,
colocation, control-flow contexts) apply to ops created inside them. Every op records
the file:line of the user code that created it, so run-time errors can point there.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from typing import Any, Callable, Dict, Iterable, List, Optional

from tensorweave.framework import device_spec as _dev
from tensorweave.framework import dtypes as _dt
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# TF's patterns, written as TF writes them: its error messages quote them
_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")
_CLEAR_DEVICE = object()  # the device-stack entry of `tf.device(None)`


def _user_location():
    """(filename, lineno) of the innermost frame outside tensorweave; cheap."""
    f = sys._getframe(2)
    pkg = _PKG_DIR
    while f is not None and f.f_code.co_filename.startswith(pkg):
        f = f.f_back
    if f is None:
        return None
    return (f.f_code.co_filename, f.f_lineno)


class GraphKeys:
    """Standard names of graph collections (TF1 `tf.GraphKeys`)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Tensor:
    """A symbolic handle to one output of an Operation."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "_id", "__weakref__")
    # Tensors compare by identity in TF1 graph mode, so `==` never builds an op.
    __array_priority__ = 100

    def __init__(self, op: "Operation", value_index: int, dtype: _dt.DType):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = _UNKNOWN
        self._consumers: List[Operation] = []
        self._id = op._graph._next_id()

    @property
    def op(self) -> "Operation":
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> _dt.DType:
        return self._dtype

    @property
    def graph(self) -> "Graph":
        return self._op._graph

    @property
    def name(self) -> str:
        return "%s:%d" % (self._op._name, self._value_index)

    @property
    def device(self) -> str:
        return self._op._device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def ndim(self) -> int:
        """The rank of the static shape; -1 when it is unknown (as TF 2's graph
        tensors)."""
        rank = self._shape.ndims
        return -1 if rank is None else rank

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Merges `shape` into the static shape.

        Raises:
          ValueError: `shape` is not compatible with the static shape (TF's message,
            which names the first dimension that differs).
        """
        try:
            self._shape = self._shape.merge_with(shape)
        except ValueError:
            raise ValueError(_shape_merge_error(self._shape, as_shape(shape))) from None

    def consumers(self) -> List["Operation"]:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph to compute this tensor in `session` (or the default one)."""
        from tensorweave.runtime.session import _run_using_default_session
        return _run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape, self._dtype.name)

    def __str__(self):
        if self._shape.ndims is None:  # TF leaves an unknown shape out
            return 'Tensor("%s", dtype=%s)' % (self.name, self._dtype.name)
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self._shape, self._dtype.name)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is "
                        "not None:` instead of `if t:` to test if a tensor is defined, and "
                        "use TensorFlow ops such as tf.cond to execute subgraphs "
                        "conditioned on the value of a tensor.")

    __nonzero__ = __bool__

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors. (%s) Please call "
                        "`x.shape` rather than `len(x)` for shape information." % self.name)

    def __iter__(self):
        # TF1 graph mode: a symbolic tensor has no Python elements (unpacking included)
        raise TypeError("Tensor objects are only iterable when eager execution is "
                        "enabled. To iterate over this tensor use tf.map_fn.")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            "Cannot convert a symbolic tf.Tensor (%s) to a numpy array. This error may "
            "indicate that you're trying to pass a Tensor to a NumPy call, which is not "
            "supported." % self.name)

    def ref(self) -> "Reference":
        """A hashable reference to this tensor, for sets and dict keys (`.deref()` gives
        the tensor back)."""
        return Reference(self)

    def experimental_ref(self) -> "Reference":
        """Deprecated spelling of `ref()`."""
        return Reference(self)

    def __reduce__(self):
        raise TypeError("Tensor objects cannot be pickled")

    @staticmethod
    def _override_operator(name: str, fn: Callable) -> None:
        setattr(Tensor, name, fn)


_UNKNOWN = unknown_shape()


class Reference:
    """An identity-keyed, hashable reference to an object (TF's `Reference`, what
    `Tensor.ref()` returns): equal references wrap the same object."""

    __slots__ = ("_wrapped", "__weakref__")

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        """The referenced object."""
        return self._wrapped

    def _other(self, other) -> "Reference":
        if not isinstance(other, Reference):
            raise TypeError("Cannot compare wrapped object with unwrapped object")
        return other

    def __eq__(self, other):
        return other is not None and self._wrapped is self._other(other)._wrapped

    def __ne__(self, other):
        return not self.__eq__(other)

    def __lt__(self, other):
        return id(self._wrapped) < id(self._other(other)._wrapped)

    def __gt__(self, other):
        return id(self._wrapped) > id(self._other(other)._wrapped)

    def __hash__(self):
        return id(self._wrapped)

    def __repr__(self):
        return "<Reference wrapping %r>" % (self._wrapped,)


class _InputList(list):
    """Operation.inputs (list-like, as TF's _InputList)."""


def _attr_value_of(value):
    """The Python value tensorweave holds for an attr given as TF's AttrValue message or
    as a plain value (strings as str); None for an empty AttrValue."""
    if hasattr(value, "WhichOneof"):
        kind = value.WhichOneof("value")
        if kind is None:
            return None
        if kind not in ("b", "s", "i", "f", "type"):
            raise TypeError("attr scope values of kind %r are not supported" % kind)
        value = getattr(value, kind)
        if kind == "type":
            return _dt.as_dtype(value)
    if isinstance(value, bytes):
        return value.decode()
    if not isinstance(value, (bool, int, float, str, _dt.DType)):
        raise TypeError("Callable for scope map key must return either None or an "
                        "AttrValue protocol buffer; but it returned: %r" % (value,))
    return value


def _plain_attr(value):
    """An attr value given as TF's AttrValue message decoded, any other as it is."""
    if hasattr(value, "WhichOneof"):
        from tensorweave.framework.graph_def_proto import attr_from_proto
        return attr_from_proto(value)
    return value


class Operation:
    """A node of the graph: an op type, named inputs/outputs and attrs."""

    __slots__ = ("_graph", "_name", "_type", "_inputs", "_control_inputs", "_outputs",
                 "_attrs", "_device", "_traceback", "_id", "_op_def", "_control_outputs",
                 "_control_flow_context", "_colocation", "_gradient_override", "_cond_pred",
                 "_seq", "__weakref__")

    def __init__(self, graph, op_type, name, inputs, output_dtypes, attrs, op_def,
                 control_inputs, device, location):
        self._graph = graph
        self._type = op_type
        self._name = name
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = attrs
        self._device = device
        self._traceback = location
        self._op_def = op_def
        self._control_outputs: List[Operation] = []
        self._control_flow_context = None
        self._colocation: List[str] = []
        self._gradient_override = None
        # a Merge that is a cond's output (ops/control_flow): the cond's predicate,
        # which the Merge's gradient switches on; None for every other op
        self._cond_pred = None
        self._id = graph._next_id()
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    # --- read access ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self) -> "Graph":
        return self._graph

    @property
    def inputs(self) -> List[Tensor]:
        return _InputList(self._inputs)

    @property
    def outputs(self) -> List[Tensor]:
        return list(self._outputs)

    def values(self):
        return tuple(self._outputs)

    @property
    def control_inputs(self) -> List["Operation"]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    @property
    def op_def(self):
        return self._op_def

    @property
    def node_def(self):
        """The op as TF's `NodeDef` message (attr values are `AttrValue` messages)."""
        from tensorweave.framework import graph_def_proto, serialize
        proto = graph_def_proto._pb()[1].NodeDef()
        graph_def_proto.node_def_to_proto(serialize.node_def_of(self), proto)
        return proto

    @property
    def traceback(self):
        return [self._traceback] if self._traceback else []

    @property
    def traceback_location(self):
        return self._traceback

    def get_attr(self, name: str) -> Any:
        """The value of attr `name` as TF gives it: a string attr as bytes, a shape attr
        as a `TensorShapeProto` (a list of either as a list of them), other attrs as
        they are.

        Raises:
          ValueError: the op has no such attr.
        """
        value = self._get_attr(name)
        if type(value) is list and value:
            if all(type(v) is str for v in value):
                return [v.encode() for v in value]
            if all(type(v) is TensorShape for v in value):
                return [v.as_proto() for v in value]
            return value
        if type(value) is str:
            return value.encode()
        if type(value) is TensorShape:
            return value.as_proto()
        return value

    def _get_attr(self, name: str) -> Any:
        """The value of attr `name` as tensorweave holds it (strings as str): what the
        library's own code reads."""
        if name == "_class" and self._colocation:
            return [("loc:@" + n).encode() for n in self._colocation]
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError("Operation '%s' has no attr named '%s'." % (self._name, name)) \
                from None

    @property
    def attrs(self) -> Dict[str, Any]:
        return dict(self._attrs)

    def colocation_groups(self) -> List[bytes]:
        if self._colocation:
            return [("loc:@" + n).encode() for n in self._colocation]
        return [("loc:@" + self._name).encode()]

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this op in `session` (or the default session)."""
        from tensorweave.runtime.session import _run_using_default_session
        _run_using_default_session(self, feed_dict, self._graph, session)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self._name, self._type)

    def __str__(self):
        return str(self.node_def)  # TF prints the NodeDef's text format

    def __reduce__(self):
        raise TypeError("Operation objects cannot be pickled")

    # --- mutation (graph construction helpers, e.g. control flow) -------------------
    def _set_device(self, device) -> None:
        self._device = _dev.spec_string(device)
        self._graph._bump()

    def _set_attr(self, name: str, value) -> None:
        self._attrs[name] = value
        self._graph._bump()

    def _add_control_input(self, op: "Operation") -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._bump()

    def _add_control_inputs(self, ops: Iterable["Operation"]) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self) -> None:
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._bump()

    def _add_input(self, tensor: Tensor) -> None:
        self._inputs.append(tensor)
        tensor._consumers.append(self)
        self._graph._bump()

    def _update_input(self, index: int, tensor: Tensor) -> None:
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._graph._bump()


class _ControlDependencies:
    __slots__ = ("control_inputs", "seen")

    def __init__(self, control_inputs):
        self.control_inputs = control_inputs
        self.seen: set = set()


class Graph:
    """A TensorFlow computation: Operations plus collections and scopes.

    Graphs are not thread-safe for construction from several threads at once (as TF1);
    running a finished graph from many threads is.
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._ops: List[Operation] = []
        self._ops_by_name: Dict[str, Operation] = {}
        self._names_in_use: Dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: List[Any] = []
        self._hidden_device_stacks: List[List[Any]] = []  # set aside by colocate_with
        self._control_stack: List[_ControlDependencies] = []
        self._colocation_stack: List[Operation] = []
        self._collections: Dict[str, list] = {}
        self._finalized = False
        self._seed = None
        self._id_counter = 0
        self._version = 0
        self._mutations = 0
        self._unfeedable: set = set()
        self._unfetchable: set = set()
        self._last_id = 0
        self._control_flow_context = None
        # control flow (ops/control_flow/control_flow_ops.py): loops built so far, and
        # whether any loop exists (enables the build-time check that loop values do not
        # escape their loop)
        self._while_contexts: list = []
        self._has_while = False
        self._gradient_override_map: Dict[str, str] = {}
        self._attr_scope_map: Dict[str, Any] = {}
        self._building_function = False
        self._container = ""  # resource container of new stateful ops (tf.container)
        # tf.debugging.enable_check_numerics (ops/debug/check_numerics_callback.py): each
        # checked output -> its CheckNumericsV2, which new ops take as input instead
        self._checked_outputs: Optional[Dict[Tensor, Tensor]] = None
        # (thread id, user location) while an import creates ops (_fix_op_location)
        self._fixed_location = None

    # --- ids and versions -------------------------------------------------------------
    def _next_id(self) -> int:
        self._id_counter += 1
        return self._id_counter

    def _bump(self) -> None:
        """Marks an existing op changed, so cached plans built on the graph are rebuilt.
        (Adding ops does not: a plan only covers ops that existed when it was built.)"""
        self._mutations += 1

    @property
    def version(self) -> int:
        return self._version

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    @property
    def building_function(self) -> bool:
        return False

    # --- default graph -------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        _default_graph_stack.push(self)
        try:
            yield self
        finally:
            _default_graph_stack.pop(self)

    # --- op creation -----------------------------------------------------------------
    def _create_op_raw(self, op_type: str, inputs: List[Tensor], output_dtypes, attrs,
                       op_def=None, name: Optional[str] = None) -> Operation:
        """Creates an op with all active scopes applied (no shape inference)."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        for t in inputs:
            if t._op._graph is not self:
                raise ValueError("Tensor %s must be from the same graph as the op %s being "
                                 "created." % (t.name, name or op_type))
        if self._checked_outputs is not None:
            checked = self._checked_outputs
            inputs = [checked.get(t, t) for t in inputs]
        ctx = self._control_flow_context
        if ctx is not None:
            inputs = ctx.resolve_inputs(inputs)
        fixed = self._fixed_location
        if fixed is not None and fixed[0] == threading.get_ident():
            location = fixed[1]
        else:
            location = _user_location()
        if self._has_while:
            check_frame_of_input = _check_frame_of_input or _load_check_frame_of_input()
            for t in inputs:
                check_frame_of_input(t, name or op_type, ctx, location)
        if name is None:
            name = self.unique_name(op_type)
        elif name.endswith("/"):
            name = name[:-1]
            self._check_name(name)
        else:
            name = self.unique_name(name)
        if not _VALID_NAME.match(name):
            raise ValueError("`%s` is not a valid node name. Accepted names conform to "
                             "Regex /%r/" % (name, _VALID_NAME))
        control_inputs = self._current_control_inputs(inputs) if self._control_stack else ()
        op = Operation(self, op_type, name, inputs, output_dtypes, attrs, op_def,
                       control_inputs, "", location)
        if self._device_stack:
            op._device = self._device_for_new_op(op)
        if self._colocation_stack:
            self._colocate_new_op(op)
        if self._attr_scope_map:
            self._apply_attr_scope(op)
        if self._gradient_override_map:
            mapped = self._gradient_override_map.get(op_type)
            if mapped is not None:
                op._gradient_override = mapped
                # as TF: an attr, so that written graphs keep the override
                op._attrs["_gradient_op_type"] = mapped
        self._add_op(op)
        for c in self._control_stack:
            c.seen.add(op)
        if ctx is not None:
            op._control_flow_context = ctx
            ctx.add_op(op)
        return op

    def _fix_op_location(self):
        """Gives the ops this thread creates, until `_release_op_location(saved)`, the
        location they would all get anyway: the innermost user frame above the function
        calling this (found once: an import creates thousands of ops from one call).

        Returns:
          What `_release_op_location` restores (an outer fix stays in force).
        """
        saved = self._fixed_location
        if saved is None or saved[0] != threading.get_ident():
            # (not a context manager: _user_location's frame count starts at our caller)
            self._fixed_location = (threading.get_ident(), _user_location())
        return saved

    def _release_op_location(self, saved) -> None:
        self._fixed_location = saved

    @contextlib.contextmanager
    def _attr_scope(self, attr_map: Dict[str, Any]):
        """Gives the ops created inside the attrs of `attr_map` (TF's private
        Graph._attr_scope, which tf.xla.experimental.jit_scope uses): each value is an
        AttrValue message, a plain value, a callable of the new op's NodeDef returning
        one, or None to leave the attr off; inner scopes override outer ones.

        Raises:
          TypeError: `attr_map` is not a dict of string keys.
        """
        if not isinstance(attr_map, dict) or not all(isinstance(k, str) for k in attr_map):
            raise TypeError("attr_scope must be a dict of string keys, got %r" % (attr_map,))
        saved = dict(self._attr_scope_map)
        for key, value in attr_map.items():
            if value is None:
                self._attr_scope_map.pop(key, None)
            else:
                self._attr_scope_map[key] = value
        try:
            yield
        finally:
            self._attr_scope_map = saved

    def _apply_attr_scope(self, op: "Operation") -> None:
        for key, value in self._attr_scope_map.items():
            if callable(value):
                value = value(op.node_def)
            value = _attr_value_of(value)
            if value is not None:
                op._attrs[key] = value

    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None,
                  attrs=None, op_def=None, compute_shapes=True, compute_device=True):
        """TF1's low-level Graph.create_op; prefer the op builders.

        `attrs` values may be TF's AttrValue messages (as TF requires them) or plain
        values. With `dtypes` the op is made as given, then its static shapes are
        inferred (as TF always does, whatever `compute_shapes` says).
        """
        from tensorweave.framework import registry
        from tensorweave.framework.op_builder import apply_op, infer_shapes
        attrs = {k: _plain_attr(v) for k, v in (attrs or {}).items()}
        if dtypes is None:
            return apply_op(op_type, list(inputs), attrs, name=name)
        if not isinstance(op_def, registry.OpDef):  # None, or TF's OpDef message
            try:
                op_def = registry.get_op_def(op_type)
            except ValueError:
                op_def = None  # an op type of no kernel: made, but not runnable
        op = self._create_op_raw(op_type, list(inputs), [_dt.as_dtype(d) for d in dtypes],
                                 attrs, op_def, name)
        infer_shapes(op)
        return op

    def _add_op(self, op: Operation) -> None:
        self._ops.append(op)
        self._ops_by_name[op._name] = op
        self._last_id = len(self._ops)
        self._version += 1
        op._seq = self._version  # the graph's `version` once it was added (TF's op id)

    def _check_name(self, name: str) -> None:
        if name in self._ops_by_name:
            raise ValueError("Duplicate node name in graph: '%s'" % name)

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` prefixed with the current name scope, made unique with `_N`."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while True:
                candidate = "%s_%d" % (base, i)
                if candidate not in self._names_in_use:
                    break
                i += 1
            if mark_as_used:
                self._names_in_use[candidate] = 1
            name = "%s_%d" % (name, i)
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Pushes a name scope; "a/" (trailing slash) re-enters an absolute scope, and
        None or "" resets to the top level."""
        old = self._name_stack
        if name:
            if isinstance(name, bytes):
                name = name.decode("utf-8")
            if not isinstance(name, str):
                raise TypeError("A name scope must be a string, got %r of type %s"
                                % (name, type(name).__name__))
            if name.endswith("/"):
                new = name[:-1]
            else:
                # at the top, a scope starts as an op name must ("-x" is refused)
                pattern, kind = (_VALID_SCOPE, "scope") if old else (_VALID_NAME,
                                                                     "root scope")
                if not pattern.match(name):
                    raise ValueError("'%s' is not a valid %s name. A %s name has to match "
                                     "the following pattern: %s"
                                     % (name, kind, kind, pattern.pattern))
                new = self.unique_name(name)
        else:
            new = ""
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # --- devices ------------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Sets the device of new ops (TF1 `Graph.device`).

        Args:
          device_name_or_function: a spec string or DeviceSpec, merged with the outer
            scopes (the fields it sets win), "" (no change), None (ignores every outer
            scope), or a device function `op -> spec` (a string, kept as written, a
            DeviceSpec, or None for ""), whose result replaces the device the inner
            scopes gave the op.

        Raises:
          ValueError: if a spec string does not parse.
        """
        entry = device_name_or_function
        if entry is None:
            entry = _CLEAR_DEVICE
        elif isinstance(entry, (str, _dev.DeviceSpec)) or not callable(entry):
            entry = _dev.spec_string(entry)  # parsed here: a bad spec fails at the scope
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _device_for_new_op(self, op: "Operation") -> str:
        """The device string of `op` from the device scopes, as TF1 computes it: from the
        innermost scope outwards, a spec merges under the device so far (the inner
        fields win), a function replaces it, None stops the walk."""
        device = ""
        for entry in reversed(self._device_stack):
            if entry is _CLEAR_DEVICE:
                break
            if isinstance(entry, str):
                if entry:
                    device = _dev.merge(entry, device)
            else:
                op._device = device
                result = entry(op)
                # a string result is kept as written (TF1 does not canonicalize it)
                device = result if isinstance(result, str) else _dev.spec_string(result)
        return device

    def _colocate_new_op(self, op: "Operation") -> None:
        """Gives `op` the colocation groups of every op on the colocation stack (its
        `_class` attr) and the device of the innermost one that has a device."""
        groups = set()
        device_set = False
        for c in reversed(self._colocation_stack):
            groups.update(c._colocation or (c._name,))
            if c._device and not device_set:
                op._device = c._device
                device_set = True
        op._colocation = sorted(groups)

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Places new ops with `op` (a Tensor, Operation or variable): they get its
        colocation groups and its device; device scopes outside are ignored inside.

        Raises:
          ValueError: if `op` is None and `ignore_existing` is False.
        """
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but ignore_existing "
                             "is not True")
        if isinstance(op, Tensor):
            op = op.op
        elif op is not None and hasattr(op, "op") and not isinstance(op, Operation):
            op = op.op
        saved, saved_devs = self._colocation_stack, self._device_stack
        stack = [] if ignore_existing else saved
        self._colocation_stack = stack + [op] if op is not None else stack
        self._device_stack = []
        self._hidden_device_stacks.append(saved_devs)
        try:
            yield
        finally:
            self._hidden_device_stacks.pop()
            self._colocation_stack = saved
            self._device_stack = saved_devs

    @contextlib.contextmanager
    def _device_functions_for_init(self):
        """Inside colocate_with, brings back the device scopes it set aside, as TF1's
        init_scope does: a variable created there still calls the device functions
        (e.g. advancing replica_device_setter's round robin), then takes the device
        of the op it is colocated with."""
        saved = self._device_stack
        if not saved:
            for devs in reversed(self._hidden_device_stacks):
                if devs:
                    self._device_stack = devs
                    break
        try:
            yield
        finally:
            self._device_stack = saved

    # --- control dependencies ---------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs` (Operations or Tensors);
        None clears the outer dependencies."""
        if control_inputs is None:
            saved = self._control_stack
            self._control_stack = []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            if not isinstance(c, (Tensor, Operation)) and hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()  # as TF's as_graph_element (Mirrored values)
            if isinstance(c, (Tensor, Operation)):
                self.as_graph_element(c)  # TF's check and message for another graph's
            if isinstance(c, Tensor):
                c = c.op
            elif not isinstance(c, Operation):
                c = getattr(c, "op", None) if hasattr(c, "op") else c
                if not isinstance(c, Operation):
                    raise TypeError("Can not convert a %s into a Tensor or Operation."
                                    % type(c).__name__)
            if c._graph is not self:
                raise ValueError("Control input %s must be from the same graph" % c.name)
            if c not in ops:
                ops.append(c)
        self._control_stack.append(_ControlDependencies(ops))
        try:
            yield
        finally:
            self._control_stack.pop()

    def _not_dominating(self, op: Operation) -> None:
        """Ops that consume `op` still get the active control dependencies themselves.

        Normally an op whose input was made inside the same `control_dependencies` block
        skips those dependencies (it is ordered after them through the input). A read that
        stands in for a TF1 reference variable is not such an input: in TF1 the consumer
        takes the variable's tensor directly and carries the dependencies itself.
        """
        for c in self._control_stack:
            c.seen.discard(op)

    def _current_control_inputs(self, inputs) -> List[Operation]:
        input_ops = {t._op for t in inputs}
        out: List[Operation] = []
        for c in self._control_stack:
            if any(op in c.seen for op in input_ops):
                continue  # already ordered after c through a data input
            for op in c.control_inputs:
                if op not in out and op not in input_ops:
                    out.append(op)
        return out

    # --- resource containers (white paper §4.7) -----------------------------------------
    @contextlib.contextmanager
    def container(self, container_name: str):
        """Resource ops (variables, queues, readers) created inside get this container,
        so `Session.reset(target, [container_name])` can clear them together."""
        saved = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    # --- gradient overrides -----------------------------------------------------------
    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: Dict[str, str]):
        """Ops of the types `op_type_map` names, created within, take the gradient
        registered under the type it maps them to.

        Raises:
          TypeError: `op_type_map` is not a dict from strings to strings.
        """
        if not isinstance(op_type_map, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # --- control flow contexts (used by ops/control_flow) ------------------------------
    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    # --- feeding and fetching -------------------------------------------------------
    def prevent_feeding(self, tensor: Tensor) -> None:
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor: Tensor) -> bool:
        return tensor not in self._unfeedable

    def _check_fetchable(self, element) -> None:
        """Raises ValueError (TF1's) for an element of an op marked not fetchable."""
        op = element if isinstance(element, Operation) else element._op
        if op in self._unfetchable:
            raise ValueError("Operation %r has been marked as not fetchable." % op._name)

    def prevent_fetching(self, op: Operation) -> None:
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    # --- lookups ------------------------------------------------------------------------
    def get_operations(self) -> List[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s."
                            % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s."
                            % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolves a Tensor, Operation or name ("op" or "op:0") in this graph."""
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError("Tensor %s is not an element of this graph." % obj)
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj._graph is not self:
                raise ValueError("Operation %s is not an element of this graph." % obj)
            return obj
        if hasattr(obj, "_as_graph_element"):
            return self.as_graph_element(obj._as_graph_element(), allow_tensor, allow_operation)
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError("Name '%s' appears to refer to a Tensor, not a Operation."
                                     % obj)
                try:
                    op_name, idx = obj.split(":")
                    idx = int(idx)
                except ValueError:
                    raise ValueError("The name '%s' looks a like a Tensor name, but is not a "
                                     "valid one. Tensor names must be of the form "
                                     "\"<op_name>:<output_index>\"." % obj) from None
                op = self._ops_by_name.get(op_name)
                if op is None:
                    raise KeyError("The name '%s' refers to a Tensor which does not exist. The "
                                   "operation, '%s', does not exist in the graph."
                                   % (obj, op_name))
                if idx >= len(op._outputs):
                    raise KeyError("The name '%s' refers to a Tensor which does not exist. The "
                                   "operation, '%s', exists but only has %d outputs."
                                   % (obj, op_name, len(op._outputs)))
                return op._outputs[idx]
            if not allow_operation:
                if obj in self._ops_by_name:
                    raise ValueError("The name '%s' refers to an Operation, not a Tensor. "
                                     "Tensor names must be of the form \"<op_name>:<output_"
                                     "index>\"." % obj)
                raise ValueError("The name '%s' looks like an (invalid) Operation name, not "
                                 "a Tensor." % obj)
            op = self._ops_by_name.get(obj)
            if op is None:
                raise KeyError("The name '%s' refers to an Operation not in the graph." % obj)
            return op
        types = []
        if allow_tensor:
            types.append("Tensor")
        if allow_operation:
            types.append("Operation")
        raise TypeError("Can not convert a %s into a %s." % (type(obj).__name__,
                                                              " or ".join(types)))

    # --- collections --------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for n in names:
            self.add_to_collection(n, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: Optional[str] = None) -> list:
        coll = self._collections.get(name)
        if coll is None:
            return []
        if scope is None:
            return list(coll)
        regex = re.compile(scope)
        return [item for item in coll
                if hasattr(item, "name") and regex.match(item.name)]

    def get_all_collection_keys(self) -> List[str]:
        return [k for k, v in self._collections.items() if isinstance(v, list)]

    @property
    def collections(self) -> List[str]:
        """The names of the collections of this graph (TF's `Graph.collections`)."""
        return list(self._collections)

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # --- serialization ----------------------------------------------------------------
    def as_graph_def(self, from_version=None, add_shapes: bool = False):
        """TensorFlow's `GraphDef` protobuf message of this graph (only the ops created
        after `version` was `from_version`, if given; with `add_shapes`, each node's
        output shapes as the attr "_output_shapes"). Our readable JSON form is
        `framework.serialize.graph_to_graph_def`."""
        from tensorweave.framework import graph_def_proto
        return graph_def_proto.graph_to_proto(self, from_version, add_shapes)

    @property
    def graph_def_versions(self):
        from tensorweave.framework import serialize
        return serialize.versions()

    def __reduce__(self):
        raise TypeError("Graph objects cannot be pickled; use as_graph_def()")


class _DefaultGraphStack(threading.local):
    """Per thread, as in TF1: the `as_default()` graphs entered, and the thread's own
    global default graph (a new thread does not see the graphs of the thread that
    started it; it builds into a default graph of its own)."""

    def __init__(self):
        self.stack: List[Graph] = []
        self.global_graph: Optional[Graph] = None

    def push(self, g):
        self.stack.append(g)

    def pop(self, g):
        if self.stack and self.stack[-1] is g:
            self.stack.pop()
        elif g in self.stack:
            self.stack.remove(g)


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    """The innermost `as_default()` graph of this thread, else this thread's global
    default graph."""
    st = _default_graph_stack
    if st.stack:
        return st.stack[-1]
    g = st.global_graph
    if g is None:
        g = st.global_graph = Graph()
    return g


def reset_default_graph() -> None:
    """Replaces this thread's global default graph with a new one (TF1
    `tf.reset_default_graph`)."""
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If "
                             "you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _default_graph_stack.global_graph = Graph()


def upstream_ops(ops, fed=frozenset()) -> set:
    """`ops` and every op they depend on, through data and control inputs; a tensor in
    `fed` (fed to a run) does not lead to the op that makes it."""
    seen, stack = set(), list(ops)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t._op for t in op._inputs if t not in fed)
        stack.extend(op._control_inputs)
    return seen


def _shape_merge_error(have: TensorShape, given: TensorShape) -> str:
    """TF's message for two static shapes that do not merge (of its C++ shape merge)."""
    if have.ndims != given.ndims:
        return "Shapes must be equal rank, but are %d and %d" % (have.ndims, given.ndims)

    def brackets(shape):
        return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())
    for i, (a, b) in enumerate(zip(have.as_list(), given.as_list())):
        if a is not None and b is not None and a != b:
            return ("Dimension %d in both shapes must be equal, but are %d and %d. Shapes "
                    "are %s and %s." % (i, a, b, brackets(have), brackets(given)))
    return "Shapes %s and %s are not compatible" % (have, given)


# ops/control_flow's check_frame_of_input, once loaded (that module imports this one; an
# import statement per op costs more than the check)
_check_frame_of_input = None


def _load_check_frame_of_input():
    global _check_frame_of_input
    from tensorweave.ops.control_flow.control_flow_ops import check_frame_of_input
    _check_frame_of_input = check_frame_of_input
    return check_frame_of_input


def _graph_of(values) -> Graph:
    """The graph of the graph elements among `values` (else the default graph), as
    TF picks the graph an op is built in.

    Raises:
      ValueError: two of `values` are from different graphs.
    """
    found, first = None, None
    for v in values:
        if isinstance(v, Tensor):  # (the attributes, not the properties: op building's
            g = v._op._graph        # hot path)
        elif isinstance(v, Operation):
            g = v._graph
        else:
            g = getattr(v, "graph", None)
            if not isinstance(g, Graph):
                continue
        if found is None:
            found, first = g, v
        elif g is not found:
            raise ValueError("%s must be from the same graph as %s (graphs are %s and %s)."
                             % (v, first, g, found))
    return found if found is not None else get_default_graph()


# --- module-level TF1 helpers operating on the default graph -----------------------------
def name_scope(name, default_name=None, values=None):
    """TF1 `tf.name_scope(name, default_name=None, values=None)`.

    Raises:
      ValueError: `values` is given without a name or a default name (TF's check).
    """
    if name is None and default_name is None and values is not None:
        raise ValueError("At least one of name (%s) and default_name (%s) must be provided."
                         % (name, default_name))
    n = name if name is not None else default_name
    g = _graph_of(values) if values else get_default_graph()
    scope = g.name_scope(n)
    if g is get_default_graph():
        return scope
    # values of another graph: as TF, that graph is the default inside the scope, so
    # the constants a function makes of its other arguments land beside them
    return _scope_in_graph(g, scope)


@contextlib.contextmanager
def _scope_in_graph(g: "Graph", scope):
    with g.as_default(), scope as name:
        yield name


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def container(container_name: str):
    """`Graph.container` on the default graph (TF1 `tf.container`)."""
    return get_default_graph().container(container_name)


def get_name_scope() -> str:
    return get_default_graph().get_name_scope()
