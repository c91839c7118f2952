"""`tf.keras.backend`: the Keras configuration (floatx, epsilon, image data format), the
learning phase, the Keras session, per-graph naming, and weight values.

What Keras keeps per graph lives in one `GraphState` on the graph (layer-name counters
are shared with `tf.layers`, as TF's are): the learning phase, the variables Keras made
(which `get_session()` initializes), and the Keras history of tensors (which layer call
made them: node.py). Tensor helpers (`sum`, `mean`, `categorical_crossentropy`, ...) are
in backend_ops.py, exported into the same namespace: installing them sets `sum`, `max`,
`min`, `abs`, `pow` on this module, so code here must not use those builtins.
"""
from __future__ import annotations

import contextlib
from typing import Dict, List, Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export

_FLOATX = "float32"
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = "channels_last"
_MANUAL_VAR_INIT = False
_SESSION = None  # the session get_session() made (set_session replaces it)


# --- configuration -------------------------------------------------------------------------
@tf_export("keras.backend.floatx")
def floatx() -> str:
    """The default float type of Keras variables and inputs, as a string ('float32')."""
    return _FLOATX


@tf_export("keras.backend.set_floatx")
def set_floatx(value: str) -> None:
    """Sets the default float type ('float16', 'float32' or 'float64').

    Raises:
      ValueError: another value.
    """
    global _FLOATX
    accepted = {"float16", "float32", "float64"}
    if value not in accepted:
        raise ValueError("Unknown `floatx` value: %s. Expected one of %s" % (value, accepted))
    _FLOATX = str(value)


@tf_export("keras.backend.epsilon")
def epsilon() -> float:
    """The fuzz factor Keras adds to avoid divisions by zero (default 1e-7)."""
    return _EPSILON


@tf_export("keras.backend.set_epsilon")
def set_epsilon(value: float) -> None:
    """Sets the fuzz factor `epsilon()` returns."""
    global _EPSILON
    _EPSILON = value


@tf_export("keras.backend.image_data_format")
def image_data_format() -> str:
    """The default `data_format` of image layers: 'channels_last' (default) or
    'channels_first'."""
    return _IMAGE_DATA_FORMAT


@tf_export("keras.backend.set_image_data_format")
def set_image_data_format(data_format: str) -> None:
    """Sets the default `data_format` of image layers.

    Raises:
      ValueError: neither 'channels_last' nor 'channels_first'.
    """
    global _IMAGE_DATA_FORMAT
    accepted = {"channels_last", "channels_first"}
    if data_format not in accepted:
        raise ValueError("Unknown `data_format`: %s. Expected one of %s"
                         % (data_format, accepted))
    _IMAGE_DATA_FORMAT = str(data_format)


@tf_export("keras.backend.cast_to_floatx")
def cast_to_floatx(x):
    """`x` in the floatx type: a cast for tensors and variables, a NumPy array else."""
    if isinstance(x, (tf.Tensor, tf.Variable, tf.SparseTensor)):
        return tf.cast(x, dtype=floatx())
    return np.asarray(x, dtype=floatx())


@tf_export("keras.backend.backend")
def backend() -> str:
    """The name of the backend: 'tensorflow', as TF's Keras answers."""
    return "tensorflow"


# --- per-graph state -----------------------------------------------------------------------
class GraphState:
    """What Keras keeps for one graph.

    Fields:
      uids: prefix -> last number `get_uid` gave.
      learning_phase: the value `set_learning_phase` gave (0 or 1), the
        'keras_learning_phase' placeholder once made, or None.
      variables: the variables Keras layers and `variable()` made, in creation order.
      initialized: ids of the variables `get_session` has already checked.
      history: tensor -> KerasHistory (the layer call that made it; node.py).
      no_history: tensors known not to depend on any tensor with a history.
      logits: an activation's output -> its input (softmax, sigmoid), which the
        crossentropies use as logits.
      assigns: id(variable) -> (variable, assign op, placeholder) of `set_value`.
    """

    def __init__(self):
        self.uids: Dict[str, int] = {}
        self.learning_phase = None
        self.variables: List = []
        self.initialized: set = set()
        self.history: Dict = {}
        self.no_history: set = set()
        self.logits: Dict = {}
        self.assigns: Dict[int, tuple] = {}


def graph_state(graph=None) -> GraphState:
    """The Keras state of `graph` (default: the default graph)."""
    g = graph if graph is not None else tf.get_default_graph()
    state = g.__dict__.get("_tensorweave_keras")
    if state is None:
        state = g.__dict__["_tensorweave_keras"] = GraphState()
    return state


def unique_object_name(name: str, zero_based: bool = True) -> str:
    """`name`, `name_1`, ... (zero_based) or `name_1`, `name_2`, ... per graph; the
    counters are those of `tf.layers`, so that mixing both gives TF's names."""
    counts = tf.get_default_graph().__dict__.setdefault("_tensorweave_layer_names", {})
    number = counts.get(name, 0)
    if zero_based:
        counts[name] = number + 1
        return "%s_%d" % (name, number) if number else name
    counts[name] = number + 1
    return "%s_%d" % (name, number + 1)


@tf_export("keras.backend.get_uid")
def get_uid(prefix: str = "") -> int:
    """1, 2, 3, ... for successive calls with `prefix`, per graph (how Input layers get
    'input_1', 'input_2', ...)."""
    uids = graph_state().uids
    uids[prefix] = uids.get(prefix, 0) + 1
    return uids[prefix]


@tf_export("keras.backend.reset_uids")
def reset_uids() -> None:
    """Restarts the default graph's layer-name and `get_uid` counters."""
    graph_state().uids.clear()
    tf.get_default_graph().__dict__.pop("_tensorweave_layer_names", None)


# --- learning phase ------------------------------------------------------------------------
@tf_export("keras.backend.learning_phase")
def learning_phase():
    """The learning phase of the default graph: the value `set_learning_phase` gave (0
    = test, 1 = train), else a bool placeholder 'keras_learning_phase' that defaults to
    False (inference) and can be fed True.

    Layers whose `training` argument is None (Dropout, BatchNormalization) use it.
    """
    state = graph_state()
    if state.learning_phase is None:
        state.learning_phase = _default_learning_phase()
    return state.learning_phase


def _default_learning_phase():
    with tf.init_scope(), tf.name_scope(None):
        return tf.placeholder_with_default(False, shape=(), name="keras_learning_phase")


@tf_export("keras.backend.set_learning_phase")
def set_learning_phase(value: int) -> None:
    """Fixes the learning phase of the default graph to `value` (0 = test, 1 = train)
    for layers built afterwards.

    Raises:
      ValueError: `value` is not 0 or 1.
    """
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    graph_state().learning_phase = value


@tf_export("keras.backend.learning_phase_scope")
@contextlib.contextmanager
def learning_phase_scope(value: int):
    """A scope in which the learning phase is `value` (0 or 1); the previous one is
    restored on exit.

    Raises:
      ValueError: `value` is not 0 or 1.
    """
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    state = graph_state()
    previous = state.learning_phase
    state.learning_phase = value
    try:
        yield
    finally:
        state.learning_phase = previous


# --- session -------------------------------------------------------------------------------
def track_variable(v) -> None:
    """Records a variable Keras made, so that `get_session()` initializes it."""
    graph_state(v.graph).variables.append(v)


@tf_export("keras.backend.manual_variable_initialization")
def manual_variable_initialization(value: bool) -> None:
    """With True, `get_session()` no longer initializes the variables Keras made."""
    global _MANUAL_VAR_INIT
    _MANUAL_VAR_INIT = bool(value)


@tf_export("keras.backend.get_session")
def get_session(op_input_list=()):
    """The session Keras runs in: the default session if there is one, else a session
    of the default graph that Keras keeps (made on first use). As TF's, it initializes
    the variables Keras layers made that are not initialized yet (unless
    `manual_variable_initialization(True)`).

    Args:
      op_input_list: accepted for compatibility (TF picks the graph from them).

    Returns:
      A tf.Session.
    """
    global _SESSION
    session = tf.get_default_session()
    if session is None:
        if _SESSION is None or _SESSION.graph is not tf.get_default_graph():
            _SESSION = tf.Session()
        session = _SESSION
    if not _MANUAL_VAR_INIT:
        with session.graph.as_default():
            _initialize_variables(session)
    return session


def _initialize_variables(session) -> None:
    state = graph_state(session.graph)
    candidates = [v for v in state.variables if id(v) not in state.initialized]
    if not candidates:
        return
    flags = session.run([tf.is_variable_initialized(v) for v in candidates])
    pending = [v for v, done in zip(candidates, flags) if not done and v.initializer is not None]
    state.initialized.update(id(v) for v in candidates)
    if pending:
        session.run(tf.variables_initializer(pending))


@tf_export("keras.backend.set_session")
def set_session(session) -> None:
    """Makes `session` the one `get_session()` returns (when no default session)."""
    global _SESSION
    _SESSION = session


@tf_export("keras.backend.clear_session")
def clear_session() -> None:
    """Resets the Keras state as TF does in graph mode: a new default graph (so layer
    names count from 0 again), a new learning phase placeholder in it, and the Keras
    session closed.

    Raises:
      AssertionError: called inside a `with graph.as_default()` block (as
        `tf.reset_default_graph`).
    """
    global _SESSION
    tf.reset_default_graph()
    if _SESSION is not None:
        _SESSION.close()
        _SESSION = None
    graph_state().learning_phase = _default_learning_phase()


# --- values --------------------------------------------------------------------------------
@tf_export("keras.backend.batch_get_value")
def batch_get_value(tensors) -> list:
    """The values of a list of tensors or variables, run in `get_session()`."""
    if not tensors:
        return []
    return get_session(tensors).run(list(tensors))


@tf_export("keras.backend.get_value")
def get_value(x):
    """The value of a tensor or variable, run in `get_session()` (other values are
    returned as they are)."""
    if not isinstance(x, (tf.Tensor, tf.Variable)):
        return x
    return get_session((x,)).run(x)


@tf_export("keras.backend.batch_set_value")
def batch_set_value(tuples) -> None:
    """Assigns values to variables: `tuples` is a list of (variable, NumPy value); one
    assign op per variable is built once and fed (as TF's)."""
    tuples = list(tuples)
    if not tuples:
        return
    ops, feeds = [], {}
    for variable, value in tuples:
        value = np.asarray(value, dtype=variable.dtype.base_dtype.as_numpy_dtype)
        op, holder = _assign_op(variable, value.ndim)
        ops.append(op)
        feeds[holder] = value
    get_session().run(ops, feed_dict=feeds)


@tf_export("keras.backend.set_value")
def set_value(x, value) -> None:
    """Assigns the NumPy `value` to the variable `x`."""
    batch_set_value([(x, value)])


def _assign_op(variable, ndim: int):
    assigns = graph_state(variable.graph).assigns
    entry = assigns.get(id(variable))
    if entry is None or entry[0] is not variable:
        with variable.graph.as_default():
            holder = tf.placeholder(variable.dtype.base_dtype, shape=[None] * ndim)
            entry = (variable, variable.assign(holder), holder)
        assigns[id(variable)] = entry
    return entry[1], entry[2]


@tf_export("keras.backend.variable")
def variable(value, dtype=None, name: Optional[str] = None, constraint=None):
    """A resource variable holding `value` (dtype default floatx()), tracked so that
    `get_session()` initializes it.

    Raises:
      NotImplementedError: a SciPy sparse value.
    """
    if hasattr(value, "tocoo"):
        raise NotImplementedError("tf.keras.backend.variable of a sparse matrix is not "
                                  "supported by tensorweave")
    v = tf.Variable(value, dtype=tf.as_dtype(dtype or floatx()), name=name,
                    constraint=constraint, use_resource=True)
    track_variable(v)
    return v


@tf_export("keras.backend.constant")
def constant(value, dtype=None, shape=None, name: Optional[str] = None):
    """`tf.constant(value)` with dtype default floatx()."""
    return tf.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


@tf_export("keras.backend.placeholder")
def placeholder(shape=None, ndim: Optional[int] = None, dtype=None, sparse: bool = False,
                name: Optional[str] = None, ragged: bool = False):
    """A placeholder of `shape` (or of rank `ndim`), dtype default floatx(); with
    `sparse`, a sparse placeholder (fed a SparseTensorValue).

    Raises:
      NotImplementedError: ragged placeholders.
    """
    if ragged:
        raise NotImplementedError("tf.keras.backend.placeholder: ragged placeholders are "
                                  "not supported by tensorweave")
    if not shape and ndim:
        shape = (None,) * ndim
    if sparse:
        return tf.sparse_placeholder(dtype or floatx(), shape=shape, name=name)
    return tf.placeholder(dtype or floatx(), shape=shape, name=name)


@tf_export("keras.backend.is_keras_tensor")
def is_keras_tensor(x) -> bool:
    """Whether `x` was made by a Keras layer called on Keras tensors (or by `Input`).

    Raises:
      ValueError: `x` is not a tensor or variable.
    """
    if not isinstance(x, (tf.Tensor, tf.Variable, tf.SparseTensor)):
        raise ValueError("Unexpectedly found an instance of type `" + str(type(x)) +
                         "`. Expected a symbolic tensor instance.")
    return isinstance(x, tf.Tensor) and x in graph_state(x.graph).history


@tf_export("keras.backend.int_shape")
def int_shape(x):
    """The static shape of `x` as a tuple of ints and None (None for an unknown rank)."""
    shape = x.shape
    if isinstance(shape, tuple):
        return shape
    if shape.ndims is None:
        return None
    return tuple(shape.as_list())


@tf_export("keras.backend.ndim")
def ndim(x) -> Optional[int]:
    """The rank of `x` (None when unknown)."""
    return x.shape.ndims


@tf_export("keras.backend.dtype")
def dtype(x) -> str:
    """The dtype of `x` as a string ('float32')."""
    return x.dtype.base_dtype.name


@tf_export("keras.backend.count_params")
def count_params(x) -> int:
    """The number of elements of the variable or tensor `x` (its shape must be known)."""
    return int(np.prod(x.shape.as_list()))


@tf_export("keras.backend.name_scope")
def name_scope(name: str):
    """`tf.name_scope(name)`."""
    return tf.name_scope(name)


class GraphExecutionFunction:
    """What `function` returns: a callable `f(input_values)` that runs the graph in
    `get_session()`, feeding `inputs`, fetching `outputs` (their structure kept) and
    running `updates` after the first output.

    Raises:
      TypeError: `updates` that is not a list or tuple.
      ValueError: unknown session keyword arguments.
    """

    def __init__(self, inputs, outputs, updates=None, name: Optional[str] = None,
                 **session_kwargs):
        updates = updates or []
        if not isinstance(updates, (list, tuple)):
            raise TypeError("`updates` in a Keras backend function should be a list or tuple.")
        self.inputs = tf.nest.flatten(inputs)
        self._outputs_structure = outputs
        self.outputs = tf.nest.flatten(outputs)
        with tf.control_dependencies(self.outputs[:1]):
            update_ops = [tf.assign(u[0], u[1]) if isinstance(u, tuple) else u
                          for u in updates]
            self.updates_op = tf.group(*update_ops)
        self.name = name
        self.feed_dict = session_kwargs.pop("feed_dict", None) or {}
        fetches = session_kwargs.pop("fetches", [])
        self.fetches = fetches if isinstance(fetches, list) else [fetches]
        # fetch -> function called with its value after each call (TF's fetch_callbacks)
        self.fetch_callbacks = {}
        self.run_options = session_kwargs.pop("options", None)
        self.run_metadata = session_kwargs.pop("run_metadata", None)
        if session_kwargs:
            raise ValueError("Some keys in session_kwargs are not supported at this time: %s"
                             % (session_kwargs.keys(),))

    def __call__(self, inputs):
        feeds = dict(self.feed_dict)
        for tensor, value in zip(self.inputs, tf.nest.flatten(inputs)):
            if value is None:
                continue
            if isinstance(value, (tf.Tensor, tf.Variable)):
                raise TypeError("tensorweave's Keras backend functions take NumPy values, "
                                "got the tensor %s for %s" % (value, tensor.name))
            feeds[tensor] = np.asarray(value, dtype=tensor.dtype.base_dtype.as_numpy_dtype)
        fetched = get_session(inputs).run(
            self.outputs + self.fetches + [self.updates_op], feed_dict=feeds,
            options=self.run_options, run_metadata=self.run_metadata)
        if self.fetch_callbacks:
            extra = fetched[len(self.outputs):len(self.outputs) + len(self.fetches)]
            for fetch, value in zip(self.fetches, extra):
                callback = self.fetch_callbacks.get(fetch)
                if callback is not None:
                    callback(value)
        return tf.nest.pack_sequence_as(self._outputs_structure, fetched[:len(self.outputs)])


@tf_export("keras.backend.function")
def function(inputs, outputs, updates=None, name: Optional[str] = None, **kwargs):
    """A callable running `outputs` from fed `inputs` in the Keras session (TF's
    `K.function`), e.g. `K.function([model.input, K.learning_phase()], [model.output])`.

    Args:
      inputs: the placeholders (a list) fed by the call's values.
      outputs: the tensors fetched (their structure is kept).
      updates: ops, or (variable, new value) pairs, run after the first output.
      name: a name for the function.
      **kwargs: feed_dict, fetches, options, run_metadata (as Session.run takes).

    Returns:
      A GraphExecutionFunction.

    Raises:
      ValueError: an unknown keyword argument.
    """
    for key in kwargs:
        if key not in ("fetches", "feed_dict", "options", "run_metadata"):
            raise ValueError('Invalid argument "%s" passed to K.function with TensorFlow '
                             "backend" % key)
    return GraphExecutionFunction(inputs, outputs, updates=updates, name=name, **kwargs)
