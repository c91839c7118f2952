"""Building `fn` once per replica, with merge_call (what MirroredStrategy.run does).

As in TF, each replica is built by its own thread, so that `merge_call` can pause a
replica in the middle of `fn` until every replica reaches it. The threads run one at a
time, never together: the main thread hands control to each in turn and waits for it to
finish or pause. A tensorweave Graph keeps its scopes (name, device, colocation,
control dependencies, variable scope, variable creators) on the graph object, so each
thread owns a copy of them, swapped in when it runs and out when it pauses.
"""
from __future__ import annotations

import contextlib
import copy
import re
import threading
from typing import Callable, Sequence

from tensorweave.distribute import distribute_lib as _lib
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph

# the per-thread construction state of a Graph (all fields the scope managers set)
_LIST_FIELDS = ("_device_stack", "_hidden_device_stacks", "_control_stack",
                "_colocation_stack", "_variable_creator_stack")
_VALUE_FIELDS = ("_name_stack", "_control_flow_context")


def _capture(g) -> dict:
    from tensorweave.ops.state import variable_scope
    state = {f: g.__dict__.get(f) for f in _LIST_FIELDS + _VALUE_FIELDS}
    state["var_scope"] = variable_scope._stores(g)[1].current_scope
    return state


def _restore(g, state: dict) -> None:
    from tensorweave.ops.state import variable_scope
    for f in _LIST_FIELDS + _VALUE_FIELDS:
        if state[f] is not None or f in g.__dict__:
            g.__dict__[f] = state[f]
    variable_scope._stores(g)[1].current_scope = state["var_scope"]


def _fresh(state: dict) -> dict:
    """A copy a new thread may change without touching the original's lists."""
    out = dict(state)
    for f in _LIST_FIELDS:
        if out[f] is not None:
            out[f] = list(out[f])
    return out


class _Abort(Exception):
    """Stops a paused replica thread after another replica failed."""


# variables made by replica 0 are looked up by the others under the same name, with
# the replica name scope and uniquifying suffixes taken out (TF's shared creator)
_UNIQUIFYING = re.compile(r"_\d+/")
_UNIQUIFYING_AT_END = re.compile(r"_\d+$")
_REPLICA_SCOPE = re.compile(r"(^|/)replica_\d+/")


def _canonical_name(name) -> str:
    if name is None:
        return "Variable"
    name = _REPLICA_SCOPE.sub(r"\1", name)
    name = _UNIQUIFYING.sub("/", name)
    return _UNIQUIFYING_AT_END.sub("", name)


def _shared_creator(store: dict, replica_id: int) -> Callable:
    uses: dict = {}

    def create(next_creator, **kwargs):
        v = next_creator(**kwargs)
        store.setdefault(_canonical_name(kwargs.get("name")), []).append(v)
        return v

    def reuse(next_creator, **kwargs):
        name = _canonical_name(kwargs.get("name"))
        k = uses.get(name, 0)
        try:
            v = store[name][k]
        except (KeyError, IndexError):
            raise RuntimeError("Tried to create variable %s with mismatching name on "
                               "device %d" % (kwargs.get("name"), replica_id)) from None
        uses[name] = k + 1
        return v
    return create if replica_id == 0 else reuse


class _ReplicaThread(threading.Thread):
    """Builds replica `replica_id`'s part of the graph; see the module docstring."""

    def __init__(self, strategy, replica_id: int, device: str, fn, args, kwargs, g,
                 main_state: dict, shared_store: dict):
        super().__init__(name="tensorweave-replica-%d" % replica_id, daemon=True)
        self.strategy, self.replica_id, self.device = strategy, replica_id, device
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.graph = g
        self.state = _fresh(main_state)
        self.shared_store = shared_store
        self.should_run = threading.Event()
        self.has_paused = threading.Event()
        self.done = False
        self.abort = False
        self.result = None
        self.error = None
        self.merge_fn = None
        self.merge_args = self.merge_kwargs = None
        self.merge_name_scope = ""
        self.merge_result = None
        self._main_state = None

    def _resume(self) -> None:
        self.should_run.wait()
        self.should_run.clear()
        if self.abort:
            raise _Abort()
        self._main_state = _capture(self.graph)
        _restore(self.graph, self.state)

    def _pause(self) -> None:
        self.state = _capture(self.graph)
        _restore(self.graph, self._main_state)
        self.has_paused.set()

    def run(self):
        from tensorweave.ops.state import variable_scope
        from tensorweave.ops.state.variables import variable_creator_scope
        g = self.graph
        try:
            self._resume()
        except _Abort:
            self.done = True
            self.has_paused.set()
            return
        try:
            with g.as_default(), _MirroredReplicaContext(self.strategy, self.replica_id,
                                                          self), g.device(self.device):
                replica_scope = g.name_scope("replica_%d" % self.replica_id) \
                    if self.replica_id else contextlib.nullcontext()
                with replica_scope:
                    store = variable_scope._stores(g)[1]
                    if self.replica_id > 0:
                        # the other replicas reuse replica 0's variables, as in TF
                        scope = copy.copy(store.current_scope)
                        scope._reuse = True
                        store.current_scope = scope
                    with variable_creator_scope(_shared_creator(self.shared_store,
                                                                self.replica_id)):
                        self.result = self.fn(*self.args, **self.kwargs)
        except _Abort:
            pass
        except BaseException as e:  # handed to the main thread, raised there
            self.error = e
        self.done = True
        self._pause()

    def merge_call(self, merge_fn, args, kwargs):
        self.merge_fn, self.merge_args, self.merge_kwargs = merge_fn, args, kwargs
        self.merge_name_scope = self.graph.get_name_scope()
        self._pause()
        self._resume()
        return self.merge_result


class _MirroredReplicaContext(_lib.ReplicaContext):
    """A replica context whose merge_call pauses this replica's thread."""

    def __init__(self, strategy, replica_id: int, thread: _ReplicaThread):
        super().__init__(strategy, replica_id)
        self._thread = thread

    def _merge_call(self, merge_fn, args, kwargs):
        return self._thread.merge_call(merge_fn, args, kwargs)


def call_for_each_replica(strategy, devices: Sequence[str], fn: Callable, args: tuple,
                          kwargs: dict):
    """`fn` built once per device in replica context; returns the regrouped results.

    Raises:
      whatever `fn` raised in a replica; RuntimeError if the replicas disagree on the
      number of merge_calls.
    """
    g = _graph.get_default_graph()
    main_state = _capture(g)
    shared_store: dict = {}
    threads = [_ReplicaThread(strategy, i, d, fn, _values.select_replica(i, args),
                              _values.select_replica(i, kwargs), g, main_state,
                              shared_store)
               for i, d in enumerate(devices)]
    for t in threads:
        t.start()
    try:
        while True:
            for t in threads:
                t.should_run.set()
                t.has_paused.wait()
                t.has_paused.clear()
                if t.error is not None:
                    raise t.error
            if all(t.done for t in threads):
                break
            if any(t.done for t in threads):
                raise RuntimeError("Some replicas made a different number of "
                                   "replica_context().merge_call() calls.")
            _run_merge(strategy, g, threads)
    finally:
        for t in threads:
            if not t.done:
                t.abort = True
                t.should_run.set()
        for t in threads:
            t.join()
    return _values.regroup([t.result for t in threads])


def _run_merge(strategy, g, threads) -> None:
    """Calls the first replica's merge_fn once, in cross-replica context under that
    replica's name scope, with the arguments of all replicas regrouped."""
    args = _values.regroup([t.merge_args for t in threads])
    kwargs = _values.regroup([t.merge_kwargs for t in threads])
    scope = threads[0].merge_name_scope
    with g.name_scope(scope + "/" if scope else None), \
            _lib._pushed(_lib._Mode(strategy, cross_replica=strategy), g):
        result = threads[0].merge_fn(strategy, *args, **kwargs)
    for i, t in enumerate(threads):
        t.merge_result = _values.select_replica(i, result)
