"""Session: runs parts of a graph, many times, from many threads (OSDI §3.2).

`run(fetches, feed_dict)` maps the fetch structure to a flat list of tensors and target
ops, looks up the cached plan for (fetches, feeds, targets) and calls its `run` (the plan
type is the executor, chosen once when the plan is built: runtime/policy.py). A repeated
run does no graph work: it converts the feeds, runs the plan's steps and rebuilds the
fetch structure.
"""
from __future__ import annotations

import collections
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import late_reads as _late_reads
from tensorweave.runtime import plan as _plan
from tensorweave.runtime.config import ConfigProto, RunMetadata, optimizations_enabled
from tensorweave.runtime.devices import DeviceManager
from tensorweave.runtime.context import session_config
from tensorweave.runtime.policy import ExecutionPolicy
from tensorweave.runtime.values import string_array


# --- fetch structures ----------------------------------------------------------------
# ops whose fetched value is not their output as it is: a persistent tensor's handle
# (ops/data_flow/session_ops.py) and a variable's handle (a TF1 reference variable's value)
_HANDLE_OPS = frozenset(("GetSessionHandle", "VarHandleOp"))


class _FetchMapper:
    """Flattens a nested fetch structure into unique graph elements and rebuilds it."""

    def __init__(self, graph: Graph, fetches, session=None):
        self.tensors: List[Tensor] = []
        self.targets: List[Operation] = []
        self._index: Dict[Any, int] = {}
        self._session = session  # turns fetched session handles into TensorHandles
        self.build = self._compile(graph, fetches)
        del self._index
        # the closures keep what they need; a mapper a session caches must not point back
        # at it (a cycle would keep a dropped session and its threads until a gc pass)
        self._session = None

    __slots__ = ("tensors", "targets", "build", "_index", "_session")

    def _leaf(self, graph, obj) -> Callable:
        comps = getattr(obj, "_fetch_components", None)
        if comps is not None and not isinstance(obj, (Tensor, Operation)):
            parts = [self._leaf(graph, c) for c in comps()]
            rebuild = obj._fetch_rebuild
            return lambda vals: rebuild([p(vals) for p in parts])
        try:
            el = graph.as_graph_element(obj, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError("Fetch argument %r has invalid type %r, must be a string or "
                            "Tensor. (%s)" % (obj, type(obj), e)) from None
        except ValueError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (obj, e)) from None
        except KeyError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (obj, e.args[0])) from None
        if isinstance(el, Operation):
            if el not in self.targets:
                self.targets.append(el)
            return lambda vals: None
        if el._op._type == "VarHandleOp":
            from tensorweave.ops.state.variables import fetched_value_of_handle
            value = fetched_value_of_handle(el._op)
            if value is not None:
                el = value
        i = self._index.get(el)
        if i is None:
            i = self._index[el] = len(self.tensors)
            self.tensors.append(el)
        if el._op._type == "GetSessionHandle" and self._session is not None:
            from tensorweave.ops.data_flow.session_ops import TensorHandle
            dtype, session = el._op.inputs[0].dtype, self._session
            return lambda vals: TensorHandle(vals[i], dtype, session)
        return lambda vals: vals[i]

    def _compile(self, graph, f) -> Callable:
        if f is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(f, (Tensor, Operation, str)) or hasattr(f, "_fetch_components") \
                or hasattr(f, "_as_graph_element"):
            return self._leaf(graph, f)
        if isinstance(f, dict):
            keys = list(f.keys())
            subs = [self._compile(graph, f[k]) for k in keys]
            cls = type(f)

            def build_dict(vals):
                d = cls() if cls is not collections.defaultdict else \
                    collections.defaultdict(f.default_factory)
                for k, s in zip(keys, subs):
                    d[k] = s(vals)
                return d
            return build_dict
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            subs = [self._compile(graph, x) for x in f]
            cls = type(f)
            return lambda vals: cls(*[s(vals) for s in subs])
        if isinstance(f, (list, tuple)):
            subs = [self._compile(graph, x) for x in f]
            cls = type(f)
            return lambda vals: cls(s(vals) for s in subs)
        return self._leaf(graph, f)


def _structure_key(f):
    """A hashable key of a fetch structure made of graph elements and plain dicts,
    lists, tuples and namedtuples: equal for structures a _FetchMapper maps alike (so a
    structure rebuilt every step, as MonitoredSession merges its hooks' fetches, is
    compiled once). None for anything else (defaultdicts, composite fetches, ...)."""
    t = type(f)
    if t is Tensor or t is Operation or t is str:
        return f
    if t is dict:
        subs = tuple(_structure_key(v) for v in f.values())
        return None if None in subs else (dict, tuple(f), subs)
    if t is list or t is tuple or (isinstance(f, tuple) and hasattr(f, "_fields")):
        subs = tuple(_structure_key(v) for v in f)
        return None if None in subs else (t, subs)
    if hasattr(f, "_as_graph_element") and not hasattr(f, "_fetch_components"):
        return f  # a variable: it stands for the same tensor on every run
    return None


_MAPPER_CACHE_SIZE = 64  # structures per session; a session fetching more starts over


# --- default session -----------------------------------------------------------------
class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack: List["BaseSession"] = []


_default_session = _DefaultSessionStack()


def get_default_session() -> Optional["BaseSession"]:
    """The innermost session made default by `with sess.as_default()` (or None)."""
    st = _default_session.stack
    return st[-1] if st else None


# TF's messages for Tensor.eval() and Operation.run() without a usable session:
# (no default session, default session of another graph, given session of another graph)
_NO_SESSION_MESSAGES = {
    "tensor": (
        "Cannot evaluate tensor using `eval()`: No default session is registered. Use "
        "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`",
        "Cannot use the default session to evaluate tensor: the tensor's graph is "
        "different from the session's graph. Pass an explicit session to "
        "`eval(session=sess)`.",
        "Cannot use the given session to evaluate tensor: the tensor's graph is different "
        "from the session's graph."),
    "operation": (
        "Cannot execute operation using `run()`: No default session is registered. Use "
        "`with sess.as_default():` or pass an explicit session to `run(session=sess)`",
        "Cannot use the default session to execute operation: the operation's graph is "
        "different from the session's graph. Pass an explicit session to "
        "run(session=sess).",
        "Cannot use the given session to execute operation: the operation's graph is "
        "different from the session's graph."),
}


def _run_using_default_session(obj, feed_dict, graph, session):
    """Runs `obj` (for `Tensor.eval()` or `Operation.run()`) in `session`, else in the
    default session."""
    none, other_default, other_given = _NO_SESSION_MESSAGES[
        "operation" if isinstance(obj, Operation) else "tensor"]
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(none)
        if session.graph is not graph:
            raise ValueError(other_default)
    elif session.graph is not graph:
        raise ValueError(other_given)
    return session.run(obj, feed_dict)


# --- feeds ---------------------------------------------------------------------------
def _feed_value(t: Tensor, value):
    """`value` as an array of t's dtype and a compatible shape, converted as TF1's
    Session.run converts feeds: a Python int that the dtype cannot hold exactly raises
    TypeError; anything else goes through `np.asarray(value).astype(dtype)` (so floats
    fed to an integer tensor are truncated, as in TF), whose TypeError or ValueError is
    raised as is; a string feed whose elements are not str or bytes raises
    InternalError("Unsupported object type ..."), as TF's conversion does."""
    dt = t._dtype
    if type(value) is np.ndarray and value.dtype == dt._np and dt is not _dt.string:
        arr = value
    elif dt is _dt.variant and not isinstance(value, np.ndarray):
        return value  # an opaque run-time value (a tf.data window) passes as it is
    elif isinstance(value, Tensor):
        raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, "
                        "or TensorHandles. For reference, the tensor object was %s which "
                        "was passed to the feed with key %s." % (value, t))
    elif hasattr(value, "_tw_feed_value"):  # a TensorHandle: its handle or its value
        return _feed_value(t, value._tw_feed_value(dt))
    else:
        if isinstance(value, int) and not _int_fits(value, dt):
            raise TypeError("Type of feed value %s with type %s is not compatible with "
                            "Tensor type %s. Try explicitly setting the type of the feed "
                            "tensor to a larger type (e.g. int64)."
                            % (value, type(value), dt.as_numpy_dtype))
        if dt is _dt.string:
            arr = string_array(value)  # the caller's array is never changed
        else:
            try:
                with np.errstate(all="ignore"):  # TF casts out-of-range values silently
                    arr = np.asarray(value).astype(dt._np, copy=False)
            except (TypeError, ValueError) as e:
                cls = TypeError if isinstance(e, TypeError) else ValueError
                raise cls("Cannot feed value %r for Tensor '%s' of dtype %s: %s"
                          % (value, t.name, dt.name, e)) from None
    shape = t._shape
    if shape._dims is not None:
        dims = shape._dims
        if len(dims) != arr.ndim or any(d._value is not None and d._value != n
                                        for d, n in zip(dims, arr.shape)):
            raise ValueError("Cannot feed value of shape %r for Tensor '%s', which has shape "
                             "'%s'" % (arr.shape, t.name, shape))
    return arr


def _int_fits(value: int, dt: _dt.DType) -> bool:
    """Whether the Python int (or bool) `value` survives conversion to `dt` (TF's test:
    the value cast to the dtype compares equal; never for a string tensor)."""
    if dt is _dt.string:
        return False
    with np.errstate(all="ignore"):
        return bool(np.array(value).astype(dt._np)[()] == value)


def _check_live(plan, out) -> None:
    from tensorweave.runtime.values import DEAD
    for k in plan.dead_fetch:
        if out[k] is DEAD:
            raise errors.InvalidArgumentError(
                None, None, "Retval[%d] does not have value: the fetched tensor was not "
                "computed because it is in a branch of tf.cond that was not taken." % k)


def _feed_items(feed_dict):
    """The (key, value) pairs of `feed_dict`, a key that is a tuple of feedable things (a
    state tuple of an RNN cell: TF feeds each of its tensors from the value's matching
    part) expanded into its leaves.

    Raises:
      ValueError: a tuple key whose value does not have its structure.
    """
    for k, v in feed_dict.items():
        if type(k) is tuple or (isinstance(k, tuple) and hasattr(k, "_fields")):
            try:
                nest.assert_same_structure(k, v, check_types=False)
            except (TypeError, ValueError) as e:
                raise ValueError("The feed_dict key %r is a structure, and its value must "
                                 "have the same structure: %s" % (k, e)) from None
            yield from zip(nest.flatten(k), nest.flatten(v))
        else:
            yield k, v


def _owned(v):
    """A fetched value as TF returns it: a 0-d result as a NumPy scalar (bytes for
    strings), and an array that may share memory with graph state (a read-only
    constant or variable value, or a view of a feed, a variable or another output)
    copied, so the value belongs to the caller."""
    if type(v) is np.ndarray:
        if not v.ndim:
            return v[()]
        if v.base is not None or not v.flags.writeable:
            return v.copy()
    return v


def _with_fed_values(fetched: List[Tensor], feeds: tuple, values: list, out: list) -> list:
    """`out`, the values of `fetched`, with each fed tensor's value replaced by its fed
    array, as TF returns a tensor that is fed and fetched (so a 0-d feed comes back as a
    0-d array, not as a NumPy scalar)."""
    fed = dict(zip(feeds, values))
    return [fed.get(t, v) for t, v in zip(fetched, out)]


def _target_string(target) -> str:
    """A session target (str, bytes or None) as a str.

    Raises:
      TypeError: `target` is not a string.
    """
    if target is not None and not isinstance(target, (str, bytes)):
        raise TypeError("Argument `target` must be a string, but got \"%s\""
                        % type(target).__name__)
    return target.decode() if isinstance(target, bytes) else (target or "")


class BaseSession:
    """A session on the local runtime; see `Session`."""

    _reset_by: Optional[str] = None  # the target a tf.Session.reset closed it for

    def __init__(self, target: str = "", graph: Optional[Graph] = None,
                 config: Optional[ConfigProto] = None):
        target = _target_string(target)
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError("Argument `config` must be a tf.ConfigProto, but got \"%s\""
                            % type(config).__name__)
        config = session_config(config)  # tf.config's settings when None, as in TF
        self._master = None
        if target.startswith("grpc://"):  # a cluster: the master plans, tasks run
            from tensorweave.distribute.master import Master
            self._master = Master(target, config)
        elif target and not target.startswith("local://"):
            from tensorweave.framework.errors import NotFoundError
            raise NotFoundError(None, None, "No session factory registered for the given "
                                "session options: {target: \"%s\"}: tensorweave knows ''"
                                " and 'local://NAME' (this process) and 'grpc://host:port'"
                                " (a task of a cluster)" % (target,))
        self._graph = graph if graph is not None else get_default_graph()
        if not isinstance(self._graph, Graph):
            raise TypeError("Argument `graph` must be a tf.Graph, but got \"%s\""
                            % type(self._graph).__name__)
        self._config = config
        self._target = target
        self._device_manager = self._master.devices if self._master is not None else \
            _devices_for_target(self._target, config)
        self._allow_soft_placement = bool(config and config.allow_soft_placement)
        self._policy = ExecutionPolicy.from_config(config)
        # a session recording its inputs for a replay (tensorweave/replay.py): plans
        # built by it record each of their runs
        self._tw_recorder = None
        if config is not None and config.experimental.record_inputs:
            from tensorweave.replay import Recorder
            self._tw_recorder = Recorder.for_session(self, config.experimental.record_inputs)
        self._opts = optimizations_enabled(config)
        self._plans: Dict[tuple, _plan.Plan] = {}
        self._plan_lock = threading.Lock()
        self._mappers: Dict[tuple, _FetchMapper] = {}  # by _structure_key
        self._op_state: Dict[Operation, dict] = {}
        # kernels reach the session through a weak proxy: the plans the session caches
        # hold kernel contexts, and a strong reference back would make every session a
        # reference cycle, freed (and its pool threads stopped) only by a gc pass
        self._binder = _plan.KernelBinder(weakref.proxy(self), self._device_manager)
        self._env = _ex.RunEnv(int(config.operation_timeout_in_ms) if config else 0)
        self._closed = False
        self._close_lock = threading.Lock()
        self._partial_runs: Dict[str, dict] = {}
        self._default_ctx = None
        self._session_tensors = None  # persistent tensors, made on first use

    @property
    def session_tensors(self):
        """The persistent tensors of this session (`tf.get_session_handle`)."""
        if self._session_tensors is None:
            from tensorweave.ops.data_flow.session_ops import SessionTensorStore
            with self._plan_lock:
                if self._session_tensors is None:
                    self._session_tensors = SessionTensorStore()
        return self._session_tensors

    # --- properties ---------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> bytes:
        """The session's target, as bytes (as TF gives it)."""
        return self._target.encode()

    def list_devices(self):
        """The devices of this session, as TF1's `_DeviceAttributes` (name, device_type,
        memory_limit_bytes, incarnation)."""
        return [_DeviceAttributes(d.name, d.device_type, d.memory_limit_bytes,
                                  d.incarnation) for d in self._device_manager.devices]

    # --- plans ------------------------------------------------------------------------
    def _get_plan(self, fetches: tuple, targets: tuple, feeds: tuple) -> _plan.Plan:
        key = (fetches, targets, feeds)
        plan = self._plans.get(key)
        if plan is not None and plan.stamp == self._graph._mutations:
            return plan
        with self._plan_lock:
            plan = self._plans.get(key)
            if plan is None or plan.stamp != self._graph._mutations:
                for t in feeds:
                    if not self._graph.is_feedable(t):
                        raise ValueError("Tensor %s may not be fed." % t.name)
                for element in fetches + targets:
                    self._graph._check_fetchable(element)
                stamp = self._graph._mutations
                checked = self._graph._checked_outputs
                if checked:  # tf.debugging.enable_check_numerics: run the checks
                    fetches = tuple(checked.get(t, t) for t in fetches)
                    feeds = tuple(checked.get(t, t) for t in feeds)
                if self._master is not None:
                    late = []
                    plan = self._master.build_plan(self._graph, fetches, targets, feeds,
                                                   self._allow_soft_placement)
                else:
                    # fetched TF1 reference variables the run updates: their handles are
                    # fetched too, to read the values after the run (late_reads.py)
                    late = _late_reads.late_reads(fetches, targets, feeds)
                    plan = _plan.build_plan(fetches + tuple(h for _, h in late), targets,
                                            feeds, self._binder, self._policy, self._opts,
                                            self._allow_soft_placement)
                plan.stamp = stamp
                if late:
                    plan = _late_reads.LateReadPlan(plan, len(fetches), [i for i, _ in late])
                if self._tw_recorder is not None:
                    plan = self._tw_recorder.recording_plan(plan, fetches, targets, feeds)
                if plan.needs_pool and self._env.pool is None and not self._env.closed:
                    pool = self._env.pool = _ex.ThreadPool(self._policy.inter_op_threads)
                    # a session dropped without close() stops its threads once it is
                    # unreachable (the threads hold the pool, never the session)
                    weakref.finalize(self, pool.shutdown)
                self._plans[key] = plan
        return plan

    def _raise_closed(self):
        if self._reset_by is not None:
            # its target was reset (tf.Session.reset): TF's error, which MonitoredSession
            # recovers from by making a new session
            raise errors.AbortedError(None, None, "Session %x is not found: its target %r "
                                      "was reset" % (id(self), self._reset_by))
        raise RuntimeError("Attempted to use a closed Session.")

    def _execute(self, plan: _plan.Plan, feed_values, options=None, run_metadata=None):
        if self._closed:
            self._raise_closed()
        trace = None
        if run_metadata is not None and options is not None and options.trace_level:
            # a watch (tensorweave.debug) passes a RunMetadata that makes its own trace
            trace = getattr(run_metadata, "_tw_step_trace", _ex.StepTrace)()
            for d in self._device_manager.devices:
                d.allocator.reset_peak()
        # TF kernels compute inf/NaN silently; NumPy would warn (once per step, not per op)
        if plan.feeds_to_device:  # feeds of ops on the GPU
            feed_values = list(feed_values)
            for i, copy in plan.feeds_to_device:
                feed_values[i] = copy(feed_values[i])
        with np.errstate(all="ignore"):
            out = plan.run(feed_values, self._env, options, trace)
        if plan.fetches_to_host:
            out = list(out)
            for i, copy in plan.fetches_to_host:
                out[i] = copy(out[i])
        if run_metadata is not None:  # one test when no metadata is asked for
            if trace is not None:
                _fill_metadata(run_metadata, trace, self._device_manager)
            if options is not None and options.output_partition_graphs:
                run_metadata.partition_graphs = plan.partition_graphs()
        if plan.dead_fetch:
            _check_live(plan, out)
        return [_owned(v) for v in out]

    def _feed_list(self, feed_dict) -> Tuple[tuple, list]:
        if not feed_dict:
            return (), []
        g = self._graph
        tensors = []
        values = []
        for k, v in _feed_items(feed_dict):
            if type(k) is Tensor:
                t = k
                if t._op._graph is not g:
                    self._check_graph_not_empty()
                    raise TypeError("Cannot interpret feed_dict key as Tensor: Tensor %s is "
                                    "not an element of this graph." % t)
            else:
                comps = getattr(k, "_feed_components", None)
                if comps is not None:
                    for t, sub in zip(comps(), k._split_feed(v)):
                        tensors.append(t)
                        values.append(_feed_value(t, sub))
                    continue
                try:
                    t = g.as_graph_element(k, allow_tensor=True, allow_operation=False)
                except (TypeError, ValueError, KeyError) as e:
                    self._check_graph_not_empty()
                    raise TypeError("Cannot interpret feed_dict key as Tensor: %s"
                                    % (e.args[0] if e.args else e)) from None
            if t._op._type in ("VarHandleOp", "ReadVariableOp"):
                # "v:0" of a variable made as a TF1 reference variable is its ref tensor,
                # "v/read:0" what all its readers read: feeding either feeds every read,
                # as feeding the variable does
                from tensorweave.ops.state.variables import variable_fed_by
                var = variable_fed_by(t)
                if var is not None:
                    for c, sub in zip(var._feed_components(), var._split_feed(v)):
                        tensors.append(c)
                        values.append(_feed_value(c, sub))
                    continue
            tensors.append(t)
            values.append(_feed_value(t, v))
        return tuple(tensors), values

    # --- run ----------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches`.

        Args:
          fetches: a graph element (Tensor, Operation, or name), or a nested list, tuple,
            namedtuple or dict of them.
          feed_dict: maps graph elements (tensors or names) to values that replace them.
          options: a RunOptions.
          run_metadata: a RunMetadata filled with step statistics when tracing.

        Returns:
          The fetched values in the structure of `fetches` (None for Operations).

        Raises:
          RuntimeError: the session is closed, or its graph is empty.
          TypeError: a fetch or feed key of the wrong kind.
          ValueError: a feed of the wrong shape or dtype (before anything runs).
          OpError subclasses: an op failed while running (names the op and its line).
        """
        if self._closed:
            self._raise_closed()
        feeds, values = self._feed_list(feed_dict)
        if type(fetches) is Tensor and fetches._op._type not in _HANDLE_OPS:
            if fetches._op._graph is not self._graph:
                self._check_graph_not_empty()
                raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. "
                                 "(Tensor %s is not an element of this graph.)"
                                 % (fetches, fetches))
            plan = self._get_plan((fetches,), (), feeds)
            out = self._execute(plan, values, options, run_metadata)[0]
            if feeds and id(fetches) in map(id, feeds):  # (no Tensor.__eq__ calls)
                return values[feeds.index(fetches)]
            return out
        if type(fetches) is Operation:
            plan = self._get_plan((), (fetches,), feeds)
            self._execute(plan, values, options, run_metadata)
            return None
        key = _structure_key(fetches)
        mapper = None if key is None else self._mappers.get(key)
        if mapper is None:
            self._check_graph_not_empty()
            mapper = _FetchMapper(self._graph, fetches, self)
            # fetched handles are built per run (their value may bind later)
            if key is not None and not any(t._op._type in _HANDLE_OPS
                                           for t in mapper.tensors):
                if len(self._mappers) >= _MAPPER_CACHE_SIZE:
                    self._mappers.clear()
                self._mappers[key] = mapper
        plan = self._get_plan(tuple(mapper.tensors), tuple(mapper.targets), feeds)
        out = self._execute(plan, values, options, run_metadata)
        if feeds and not set(map(id, feeds)).isdisjoint(map(id, mapper.tensors)):
            out = _with_fed_values(mapper.tensors, feeds, values, out)
        return mapper.build(out)

    def _check_graph_not_empty(self) -> None:
        if self._graph.version == 0:
            raise RuntimeError("The Session graph is empty. Add operations to the graph "
                               "before calling run().")

    def make_callable(self, fetches, feed_list=None, accept_options: bool = False):
        """A function `f(*feed_values)` that runs `fetches` with a prebuilt plan."""
        mapper = _FetchMapper(self._graph, fetches, self)
        feeds = tuple(self._graph.as_graph_element(f, allow_tensor=True, allow_operation=False)
                      for f in (feed_list or ()))
        key = (tuple(mapper.tensors), tuple(mapper.targets), feeds)
        single_tensor = type(fetches) is Tensor and fetches._op._type not in _HANDLE_OPS
        single_op = type(fetches) is Operation

        def call(*args, **kwargs):
            # as TF's: options and run_metadata are taken with or without accept_options
            options = kwargs.pop("options", None)
            run_metadata = kwargs.pop("run_metadata", None)
            if kwargs:
                raise TypeError("unexpected keyword arguments %s" % sorted(kwargs))
            if len(args) != len(feeds):
                raise ValueError("Expected %d feed values, got %d" % (len(feeds), len(args)))
            plan = self._get_plan(*key)
            vals = [_feed_value(t, v) for t, v in zip(feeds, args)]
            out = self._execute(plan, vals, options, run_metadata)
            if single_tensor:
                return out[0]
            if single_op:
                return None
            return mapper.build(out)
        return call

    # --- partial runs -------------------------------------------------------------------
    def partial_run_setup(self, fetches, feeds=None) -> str:
        """Declares the fetches and feeds of a sequence of `partial_run` calls.

        Raises:
          RuntimeError: the session is closed, or its graph is empty.
        """
        if self._closed:
            self._raise_closed()
        self._check_graph_not_empty()
        mapper = _FetchMapper(self._graph, fetches)
        feed_ts = [self._graph.as_graph_element(f, allow_tensor=True, allow_operation=False)
                   for f in (feeds or [])]
        handle = "pr_%d" % (len(self._partial_runs) + 1)
        self._partial_runs[handle] = {
            "fetches": set(mapper.tensors), "targets": set(mapper.targets),
            "feeds": set(feed_ts), "fed": {}, "computed": {}, "done_targets": set(),
            "fetched": set()}
        return handle

    def partial_run(self, handle: str, fetches, feed_dict=None):
        """Continues the partial run `handle`: feeds more values, fetches more results.
        Values computed by earlier calls are reused, never recomputed."""
        state = self._partial_runs.get(handle)
        if state is None:
            raise errors.InvalidArgumentError(None, None, "Unknown partial run handle %r"
                                              % handle)
        feeds, values = self._feed_list(feed_dict)
        for t in feeds:
            if t not in state["feeds"]:
                raise errors.InvalidArgumentError(
                    None, None, "Feed %s was not specified in partial_run_setup." % t.name)
            if t in state["fed"]:
                raise errors.InvalidArgumentError(
                    None, None, "The feed %s has already been fed." % t.name)
        mapper = _FetchMapper(self._graph, fetches)
        fetched = state["fetched"]
        for t in mapper.tensors:
            if t not in state["fetches"]:
                raise errors.InvalidArgumentError(
                    None, None, "Fetch %s was not specified in partial_run_setup." % t.name)
            if t in fetched:
                raise errors.InvalidArgumentError(
                    None, None, "The fetch %s has already been fetched." % t.name)
        for op in mapper.targets:
            if op not in state["targets"]:
                raise errors.InvalidArgumentError(
                    None, None, "Fetch %s was not specified in partial_run_setup." % op.name)
        state["fed"].update(zip(feeds, values))
        known = dict(state["computed"])
        known.update(state["fed"])
        want = [t for t in mapper.tensors if t not in known]
        targets = tuple(op for op in mapper.targets if op not in state["done_targets"])
        if want or targets:
            plan = self._get_plan(tuple(want), targets, tuple(known))
            out = self._execute(plan, list(known.values()))
            state["computed"].update(zip(want, out))
            state["done_targets"].update(targets)
        vals = [state["computed"].get(t, state["fed"].get(t)) for t in mapper.tensors]
        fetched.update(mapper.tensors)
        return mapper.build(vals)

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Frees the session's resources; later runs raise RuntimeError."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        # steps blocked in asynchronous kernels end with this error; the pool stops
        self._env.close(errors.CancelledError(None, None, "Session has been closed."))
        self._plans.clear()
        self._mappers.clear()
        self._op_state.clear()
        if self._session_tensors is not None:
            self._session_tensors.clear()
        if self._master is not None:
            self._master.close()
        elif not self._target:  # a target's resources outlive its sessions, until reset
            for d in self._device_manager.devices:
                d.resources.clear()

    def __del__(self):
        # as TF's: a session dropped without close() is closed when it is freed, so that
        # a cluster's workers forget its graphs. Their RPCs may wait on an unreachable
        # task, so they go to a thread of their own rather than block whoever drops it.
        try:
            if getattr(self, "_closed", True):
                return
            master, self._master = self._master, None
            self.close()
            if master is not None:
                threading.Thread(target=master.close, name="tw-session-close",
                                 daemon=True).start()
        except Exception:  # noqa: BLE001 -- at interpreter exit, modules may be gone
            pass

    def as_default(self):
        return _SessionDefault(self, enter_graph=False)

    def __enter__(self):
        if self._default_ctx is None:
            self._default_ctx = []
        ctx = _SessionDefault(self, enter_graph=True)
        self._default_ctx.append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._default_ctx.pop().__exit__(exc_type, exc, tb)
        self.close()
        return False

    def __reduce__(self):
        raise TypeError("Session objects cannot be pickled")

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Resets resource containers on `target` and closes the sessions connected to
        it (TF1 `tf.Session.reset`).

        Args:
          target: "local://NAME", an in-process target whose resources (variables,
            queues, ...) are shared by all its sessions; for "" every live local
            session's containers are cleared.
          containers: names of the containers to clear ("" or "localhost" is the default
            container); None clears all.
          config: accepted for compatibility.
        """
        target = _target_string(target)
        if target.startswith("grpc://"):
            from tensorweave.distribute.master import Master
            Master.reset(target, containers, config)
        for s in list(_LIVE_SESSIONS):
            if s._target == target and not s._closed:
                if not target:
                    for d in s._device_manager.devices:
                        d.resources.clear(containers)
                    s._plans.clear()
                else:
                    s._reset_by = target
                    s.close()
        devices = _TARGET_DEVICES.get(target) if target else None
        if devices is not None:
            for d in devices.devices:
                d.resources.clear(containers)


# In-process targets ("local://NAME") and their devices: like a TF server's, a target's
# resources are shared by every session on it and outlive them until Session.reset.
_TARGET_DEVICES: Dict[str, DeviceManager] = {}
_TARGET_LOCK = threading.Lock()


def _devices_for_target(target: str, config) -> DeviceManager:
    if not target:
        return DeviceManager.from_config(config)  # a direct session owns its devices
    with _TARGET_LOCK:
        devices = _TARGET_DEVICES.get(target)
        if devices is None:
            devices = _TARGET_DEVICES[target] = DeviceManager.from_config(config)
        return devices


class _SessionDefault:
    def __init__(self, sess: BaseSession, enter_graph: bool):
        self._sess = sess
        self._graph_ctx = sess.graph.as_default() if enter_graph else None

    def __enter__(self):
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        _default_session.stack.append(self._sess)
        return self._sess

    def __exit__(self, *exc):
        st = _default_session.stack
        if st and st[-1] is self._sess:
            st.pop()
        elif self._sess in st:
            st.remove(self._sess)
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)
        return False


class _DeviceAttributes:
    """One entry of `Session.list_devices()` (TF1's session._DeviceAttributes)."""

    def __init__(self, name, device_type, memory_limit_bytes=0, incarnation=0):
        self._name = name
        self._device_type = device_type
        self._memory_limit_bytes = memory_limit_bytes
        self._incarnation = incarnation

    @property
    def name(self) -> str:
        return self._name

    @property
    def device_type(self) -> str:
        return self._device_type

    @property
    def memory_limit_bytes(self) -> int:
        return self._memory_limit_bytes

    @property
    def incarnation(self) -> int:
        return self._incarnation

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d, %d)" % (
            self._name, self._device_type, self._memory_limit_bytes, self._incarnation)


_LIVE_SESSIONS: "weakref.WeakSet[BaseSession]" = weakref.WeakSet()


class Session(BaseSession):
    """A TF1 session on the local runtime.

    Args:
      target: "" for the in-process runtime.
      graph: the graph to run (default: the default graph).
      config: a ConfigProto.

    Use as a context manager to make it the default session and its graph the default
    graph; `close()` frees its variables and other resources.
    """

    def __init__(self, target: str = "", graph: Optional[Graph] = None,
                 config: Optional[ConfigProto] = None):
        super().__init__(target, graph, config)
        _LIVE_SESSIONS.add(self)


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session on construction."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None,
                 config: Optional[ConfigProto] = None):
        super().__init__(target, graph, config)
        _LIVE_SESSIONS.add(self)
        self._interactive_ctx = _SessionDefault(self, enter_graph=True)
        self._interactive_ctx.__enter__()

    def close(self) -> None:
        if not self._closed and self._interactive_ctx is not None:
            self._interactive_ctx.__exit__(None, None, None)
            self._interactive_ctx = None
        super().close()


def _fill_metadata(md: RunMetadata, trace: "_ex.StepTrace", devices: DeviceManager) -> None:
    """RunMetadata.step_stats from the records of a traced run: per device (and per
    task on a cluster), one NodeExecStats per kernel execution (runtime/step_stats.py)."""
    from tensorweave.runtime.step_stats import device_step_stats
    md.step_stats.dev_stats = device_step_stats(trace)
