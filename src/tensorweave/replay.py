"""Recording the external inputs of a session, and replaying them in a fresh process.

A session in the deterministic mode (runtime/determinism.py) computes the same values
from the same inputs however its threads are timed. Its inputs from outside are the
values fed to its calls, what its readers read from files, and the random seeds. With
`ConfigProto(experimental={'record_inputs': DIR})` (which turns the deterministic mode
on) the session writes these to DIR as it runs; `replay(DIR)` rebuilds the graph in a new
session and re-runs the recorded calls with the recorded inputs, so a step that failed
fails again, with the same error, on the same state, in a debugger if you like:

    # the program that fails (say at its 8th training step)
    config = tf.ConfigProto(experimental={'deterministic': True,
                                          'record_inputs': '/tmp/run1'})
    with tf.Session(config=config) as sess:
        ...  # unchanged: feeds, queue runners, readers

    # later, in another process (the input files need not exist any more)
    from tensorweave import replay
    calls = replay.load_calls('/tmp/run1')
    failing = next(c for c in calls if c['stream'] == 'main' and c['error'])
    replay.replay('/tmp/run1')            # raises failing['error'] again
    with replay.replay('/tmp/run1', until_step=failing['step'] - 1) as r:
        r.session.run(r.graph.get_collection('variables'))  # the state before it
        r.graph                           # the recorded graph, to build more ops on

What is recorded (each call's line is appended and flushed when the call ends, so a
program that crashes leaves a usable record):
  * `graph.meta`: the graph as a MetaGraphDef (train.export_meta_graph), written again
    whenever the graph grew (graphs only grow, so the last one serves every call);
  * `calls.jsonl`: one JSON line per call that ran a plan (Session.run, a callable of
    make_callable, a partial_run), in the order they began: its sequence number, its
    stream and step within the stream, the names of its fetches, targets and feeds, the
    outputs of its reader ops (ReaderReadV2, ReaderReadUpToV2, ReadFile), the number of
    calls of the main stream finished when it began (`main_done`), its error (class and
    message) if it failed, and a digest of its fetched values;
  * `calls/<seq>.npz`: the call's fed values and reader outputs (np.savez; string
    tensors as a uint8 buffer and an int64 array of lengths; nothing is pickled);
  * `index.json`: the format version and the effective seeds of the graph's random ops
    and random shuffle queues (those without seeds are named by their op name), and the
    user line that created each op (so the replay's errors name the recorded program's
    lines).

A session recording to DIR replaces what DIR held; two sessions must not record to one
directory.

Streams: "main" is the calls of the program's main thread; each QueueRunner thread's
calls form the stream "runner:<queue name>:<thread index>"; other threads
"thread:<thread name>". A step number is a call's index in its stream (the main
stream's step 0 is usually the initializer's run).

Replay runs the main stream on the calling thread and each QueueRunner's calls (all of
its threads, in their recorded order, which is their turn order) on a thread of its own,
starting each of those calls only once the main stream has finished as many calls as it
had when the call began. A reader op whose outputs were recorded is not run: its outputs
are fed with the recorded values (so the files need not exist). The replaying session
runs in the deterministic mode, so queue contents and draws, random values and variable
updates are those of the recording. Calls of other user threads are replayed on their
own threads; their order against the main stream is not recorded (a program whose
threads race on shared state cannot be replayed exactly). A reader op that ran more than
once in one call (inside a while loop) cannot be fed and is refused at replay. Each
replayed main call is checked against the record (the digest of its fetched values, its
error): a difference raises ReplayMismatchError, naming the call.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
from typing import Dict, List, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import determinism as _determinism

FORMAT_VERSION = 1
INDEX, CALLS, GRAPH, DATA = "index.json", "calls.jsonl", "graph.meta", "calls"
_READER_OPS = frozenset({"ReaderReadV2", "ReaderReadUpToV2", "ReadFile"})

__all__ = ["Recorder", "Replay", "ReplayMismatchError", "load_calls", "replay"]


class ReplayMismatchError(RuntimeError):
    """A replayed call computed other values than the recorded one (or did not fail as
    it did): the program depends on something the record does not hold."""


# --- values <-> files ---------------------------------------------------------------------
def _encode(arrays: Dict[str, np.ndarray], key: str, value) -> None:
    """Stores `value` (a fed value or reader output) under `key` in `arrays`."""
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    if arr.dtype == object:  # a string tensor: bytes objects
        flat = arr.ravel().tolist()
        if not all(isinstance(v, (bytes, str)) for v in flat):
            bad = next(v for v in flat if not isinstance(v, (bytes, str)))
            raise errors.UnimplementedError(
                None, None, "record_inputs: cannot record a value holding %s objects "
                "(only numbers and strings are recorded)" % type(bad).__name__)
        flat = [v.encode("utf-8") if isinstance(v, str) else v for v in flat]
        arrays[key + ".bytes"] = np.frombuffer(b"".join(flat), dtype=np.uint8)
        arrays[key + ".lengths"] = np.array([len(v) for v in flat],
                                            dtype=np.int64).reshape(arr.shape)
    elif arr.dtype.hasobject or arr.dtype.kind == "V":
        raise errors.UnimplementedError(None, None, "Cannot record a value of dtype %s"
                                        % arr.dtype)
    else:
        arrays[key] = arr


def _decode(npz, key: str) -> np.ndarray:
    if key + ".bytes" in npz.files:
        data = npz[key + ".bytes"].tobytes()
        lengths = npz[key + ".lengths"]
        out = np.empty(lengths.shape, dtype=object)
        flat = out.reshape(-1)
        pos = 0
        for i, n in enumerate(lengths.ravel().tolist()):
            flat[i] = data[pos:pos + n]
            pos += n
        return out
    return npz[key]


def _digest(values) -> str:
    """A digest of fetched values (dtype, shape and bytes of each)."""
    h = hashlib.sha256()
    for v in values:
        if isinstance(v, bytes):
            v = np.array(v, dtype=object)
        elif isinstance(v, (np.generic, bool, int, float, complex)):
            v = np.asarray(v)  # a NumPy scalar is the 0-d array it stands for
        if isinstance(v, np.ndarray) and v.dtype != object:
            h.update(("%s%s" % (v.dtype.str, v.shape)).encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, np.ndarray):
            h.update(repr(v.shape).encode())
            for x in v.ravel():
                x = x if isinstance(x, bytes) else repr(x).encode()
                h.update(b"%d:" % len(x))
                h.update(x)
        else:
            h.update(repr(type(v).__name__).encode())
    return h.hexdigest()


def _stream_of_thread() -> str:
    label = _determinism.current_stream()
    if label is not None:
        return "runner:%s:%d" % label
    t = threading.current_thread()
    return "main" if t is threading.main_thread() else "thread:" + t.name


# --- recording ----------------------------------------------------------------------------
class _Call:
    """The record of one call, filled while it runs."""

    __slots__ = ("meta", "arrays", "readers", "lock", "reader_ops")

    def __init__(self, meta: dict, reader_ops: frozenset):
        self.meta = meta
        self.arrays: Dict[str, np.ndarray] = {}
        self.readers: Dict[str, list] = {}
        self.lock = threading.Lock()
        self.reader_ops = reader_ops  # the reader ops its plan runs

    def add_reader(self, op_name: str, outputs) -> None:
        with self.lock:
            self.readers.setdefault(op_name, []).append(
                outputs if isinstance(outputs, (list, tuple)) else [outputs])


class _RecordingPlan:
    """A plan of a recording session: runs the plan it wraps and records the run."""

    def __init__(self, plan, recorder: "Recorder", names: tuple, reader_ops: frozenset):
        self._plan = plan
        self._recorder = recorder
        self._names = names  # (fetch names, target names, feed names)
        self._reader_ops = reader_ops

    def __getattr__(self, name):
        return getattr(self._plan, name)

    def run(self, feed_values, env, options=None, trace=None) -> list:
        rec = self._recorder
        call = rec.begin(self._names, feed_values, self._reader_ops)
        outer = getattr(rec.local, "call", None)
        rec.local.call = call
        try:
            out = self._plan.run(feed_values, env, options, trace)
        except errors.OpError as e:
            rec.end(call, None, e)
            raise
        finally:
            rec.local.call = outer
            rec.finished(call)  # also when it raised something else (a closed session)
        rec.end(call, out, None)
        return out


class Recorder:
    """Writes the inputs of one session's calls to a directory (see the module
    docstring). Made by the session when its ConfigProto has
    experimental.record_inputs."""

    def __init__(self, graph, directory: str):
        self.directory = os.fspath(directory)
        self.graph = graph
        self.local = threading.local()  # the call running on this thread
        self._lock = threading.Lock()
        self._seq = 0
        self._main_done = 0
        self._steps: Dict[str, int] = {}
        self._graph_stamp = None
        self._bound_readers: List[str] = []  # reader ops bound by the plan being built
        self._in_flight: Dict[int, _Call] = {}  # running calls whose plan reads
        os.makedirs(os.path.join(self.directory, DATA), exist_ok=True)
        for name in os.listdir(os.path.join(self.directory, DATA)):
            if name.endswith(".npz"):
                os.remove(os.path.join(self.directory, DATA, name))
        self._calls_file = open(os.path.join(self.directory, CALLS), "w", encoding="utf-8")

    @classmethod
    def for_session(cls, session, directory: str) -> "Recorder":
        if getattr(session, "_master", None) is not None:
            raise errors.UnimplementedError(
                None, None, "record_inputs: recording a session on a cluster (%s) is not "
                "supported; record a local session" % session._target)
        rec = cls(session.graph, directory)
        # the file is closed when the session goes (the recorder holds no session)
        weakref.finalize(session, rec._calls_file.close)
        return rec

    # --- hooks of the session and the kernel binder ----------------------------------
    def recording_plan(self, plan, fetches, targets, feeds) -> _RecordingPlan:
        """Wraps a plan the session built (once per plan; writes the graph if it grew)."""
        with self._lock:
            stamp = (self.graph._mutations, self.graph._last_id)  # edits, additions
            if self._graph_stamp != stamp:
                self._write_graph()
                self._graph_stamp = stamp
            # the session builds one plan at a time: the readers bound since the last
            # plan are this plan's
            reader_ops = frozenset(self._bound_readers)
            self._bound_readers.clear()
        names = (tuple(t.name for t in fetches), tuple(op.name for op in targets),
                 tuple(t.name for t in feeds))
        return _RecordingPlan(plan, self, names, reader_ops)

    def bind_kernel(self, fn, node, is_async: bool):
        """The kernel of `node` for a recording session: reader ops record their
        outputs into the call running on the thread that calls the kernel (or, for a
        partition running on another thread, the one running call whose plan holds
        the reader op)."""
        if node.type not in _READER_OPS or node.op is None:
            return fn
        name = node.op.name
        with self._lock:
            self._bound_readers.append(name)
        local = self.local
        owner = self._owner_of
        if is_async:
            def run_async(ctx, state, done, *args):
                call = owner(getattr(local, "call", None), name)

                def finished(result=None, exc=None):
                    if exc is None and call is not None:
                        call.add_reader(name, result)
                    done(result=result, exc=exc)
                fn(ctx, state, finished, *args)
            return run_async

        def run(ctx, *args):
            r = fn(ctx, *args)
            call = owner(getattr(local, "call", None), name)
            if call is not None:
                call.add_reader(name, r)
            return r
        return run

    def _owner_of(self, call: Optional[_Call], reader: str) -> Optional[_Call]:
        """The call a run of reader op `reader` belongs to: `call` (the one running on
        the kernel's thread) if its plan holds the op, else the one running call whose
        plan does; with several, none (they are marked: replay refuses them)."""
        if call is not None and reader in call.reader_ops:
            return call
        with self._lock:
            owners = [c for c in self._in_flight.values() if reader in c.reader_ops]
        if len(owners) == 1:
            return owners[0]
        for c in owners:
            c.meta["unattributed_reads"] = True
        return None

    # --- one call -----------------------------------------------------------------------
    def begin(self, names: tuple, feed_values, reader_ops: frozenset) -> _Call:
        stream = _stream_of_thread()
        with self._lock:
            seq = self._seq
            self._seq += 1
            step = self._steps.get(stream, 0)
            self._steps[stream] = step + 1
            main_done = self._main_done
        fetches, targets, feeds = names
        meta = {"seq": seq, "stream": stream, "step": step, "fetches": list(fetches),
                "targets": list(targets), "feeds": {}, "readers": {},
                "main_done": main_done, "error": None, "digest": None}
        call = _Call(meta, reader_ops)
        if reader_ops:
            with self._lock:
                self._in_flight[id(call)] = call
        for i, (name, v) in enumerate(zip(feeds, feed_values)):
            key = "feed%d" % i
            _encode(call.arrays, key, v)
            meta["feeds"][name] = key
        return call

    def finished(self, call: _Call) -> None:
        """The call's plan has returned: no read can belong to it any more."""
        if call.reader_ops:
            with self._lock:
                self._in_flight.pop(id(call), None)

    def end(self, call: _Call, out, exc: Optional[errors.OpError]) -> None:
        self.finished(call)
        meta = call.meta
        for op_name, runs in call.readers.items():
            keys = []
            for r, outputs in enumerate(runs):
                ks = []
                for j, v in enumerate(outputs):
                    key = "reader_%s_%d_%d" % (len(meta["readers"]), r, j)
                    _encode(call.arrays, key, v)
                    ks.append(key)
                keys.append(ks)
            meta["readers"][op_name] = keys
        if exc is not None:
            meta["error"] = {"class": type(exc).__name__, "message": exc.message}
        else:
            meta["digest"] = _digest(out)
        if call.arrays:
            meta["data"] = "%s/%06d.npz" % (DATA, meta["seq"])
            np.savez(os.path.join(self.directory, meta["data"]), allow_pickle=False,
                     **call.arrays)
        line = json.dumps(meta, sort_keys=True)
        with self._lock:
            if meta["stream"] == "main":
                self._main_done += 1
            if not self._calls_file.closed:
                self._calls_file.write(line + "\n")
                self._calls_file.flush()

    def _write_graph(self) -> None:
        from tensorweave.train import meta_graph
        tmp = os.path.join(self.directory, GRAPH + ".tmp")
        # collections with no MetaGraphDef form here (queue runners, control-flow
        # contexts) are left out: the replay needs none of them
        keys = [k for k in self.graph.get_all_collection_keys()
                if k not in meta_graph._CONTEXT_KEYS]
        meta_graph.export_meta_graph(tmp, graph=self.graph, collection_list=keys)
        os.replace(tmp, os.path.join(self.directory, GRAPH))
        index = {"format_version": FORMAT_VERSION, "graph": GRAPH, "calls": CALLS,
                 "seeds": effective_seeds(self.graph),
                 "locations": {op.name: list(op.traceback_location)
                               for op in self.graph.get_operations()
                               if op.traceback_location}}
        with open(os.path.join(self.directory, INDEX), "w", encoding="utf-8") as f:
            json.dump(index, f, indent=1, sort_keys=True)


def effective_seeds(graph) -> Dict[str, List[int]]:
    """The (seed, seed2) each random op and random shuffle queue of `graph` draws with
    in the deterministic mode: its attrs, or `determinism.name_seed` of its name."""
    seeds = {}
    for op in graph.get_operations():
        try:
            s1, s2 = op._get_attr("seed"), op._get_attr("seed2")
        except (ValueError, KeyError):
            continue
        if not (s1 or s2):
            s1, s2 = _determinism.name_seed(op.name)
        seeds[op.name] = [int(s1), int(s2)]
    return seeds


# --- replay -------------------------------------------------------------------------------
def load_calls(directory: str) -> List[dict]:
    """The recorded calls of `directory`, in the order they began."""
    with open(os.path.join(directory, INDEX), encoding="utf-8") as f:
        index = json.load(f)
    if index.get("format_version") != FORMAT_VERSION:
        raise ValueError("%s: record format %r, expected %d"
                         % (directory, index.get("format_version"), FORMAT_VERSION))
    calls = []
    with open(os.path.join(directory, index["calls"]), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                calls.append(json.loads(line))
    calls.sort(key=lambda c: c["seq"])
    return calls


class Replay:
    """A replayed session: `session` (still open, in the state after the last replayed
    main call), `graph`, `results` (the fetched values of each replayed main call, a
    list per call in the order of its recorded fetch names) and `steps` (how many main
    calls ran). Close it (or use it as a context manager) to stop the replay threads."""

    def __init__(self, session, graph, threads, stop):
        self.session, self.graph = session, graph
        self.results: List[list] = []
        self.steps = 0
        self._threads, self._stop = threads, stop

    def close(self) -> None:
        self._stop()
        self.session.close()
        for t in self._threads:
            t.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Progress:
    """How many main calls the replay has finished; replay threads wait on it."""

    def __init__(self):
        self.cond = threading.Condition()
        self.done = 0
        self.stopped = False

    def advance(self) -> None:
        with self.cond:
            self.done += 1
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()

    def wait_for(self, n: int) -> bool:
        with self.cond:
            self.cond.wait_for(lambda: self.stopped or self.done >= n)
            return not self.stopped


def _feed_dict(graph, directory: str, call: dict) -> dict:
    if call.get("unattributed_reads"):
        raise errors.UnimplementedError(
            None, None, "Replay: call %d (step %d of stream %s) ran reader ops on another "
            "thread while other calls running the same reader ops were in flight; what it "
            "read was not recorded" % (call["seq"], call["step"], call["stream"]))
    feeds = {}
    data = call.get("data")
    npz = np.load(os.path.join(directory, data), allow_pickle=False) if data else None
    for name, key in call["feeds"].items():
        feeds[graph.get_tensor_by_name(name)] = _decode(npz, key)
    for op_name, runs in call["readers"].items():
        if len(runs) != 1:
            raise errors.UnimplementedError(
                None, None, "Replay: reader op %s ran %d times in call %d (step %d of "
                "stream %s); only a reader op that runs once per call can be fed"
                % (op_name, len(runs), call["seq"], call["step"], call["stream"]))
        op = graph.get_operation_by_name(op_name)
        for j, key in enumerate(runs[0]):
            feeds[op.outputs[j]] = _decode(npz, key)
    return feeds


def _run_call(sess, graph, directory: str, call: dict) -> list:
    fetches = [graph.get_tensor_by_name(n) for n in call["fetches"]]
    targets = [graph.get_operation_by_name(n) for n in call["targets"]]
    out = sess.run((fetches, targets), feed_dict=_feed_dict(graph, directory, call))
    return out[0]


def _check(call: dict, values, exc) -> None:
    """Raises ReplayMismatchError if the replayed outcome differs from the record."""
    err = call["error"]
    where = "call %d (step %d of stream %s)" % (call["seq"], call["step"], call["stream"])
    if exc is not None:
        if err is None:
            raise ReplayMismatchError("%s failed in the replay (%s: %s) but succeeded when "
                                      "recorded" % (where, type(exc).__name__, exc.message))
        return
    if err is not None:
        raise ReplayMismatchError("%s succeeded in the replay but failed when recorded "
                                  "(%s: %s)" % (where, err["class"], err["message"]))
    if call["digest"] is not None and _digest(values) != call["digest"]:
        raise ReplayMismatchError("%s fetched other values than when recorded" % where)


def replay(directory: str, until_step: Optional[int] = None, config=None) -> Replay:
    """Replays the calls recorded in `directory` (see the module docstring) in a new
    graph and session.

    Args:
      directory: a directory written by a session with experimental.record_inputs.
      until_step: the last main-stream step to replay (0 is the first call of the main
        thread); None replays them all.
      config: a ConfigProto for the replaying session (deterministic mode is turned on
        in it; record_inputs is cleared).

    Returns:
      A Replay holding the open session after step `until_step`.

    Raises:
      OpError: the error a replayed main call raised (the recorded one: the same class
        and message), after the replay threads have stopped and the session closed.
      ReplayMismatchError: a replayed call computed other values than the recorded one,
        failed where the recorded one succeeded, or the reverse.
    """
    from tensorweave.framework.graph import Graph
    from tensorweave.runtime.config import ConfigProto
    from tensorweave.runtime.session import Session
    from tensorweave.train.meta_graph import import_meta_graph

    directory = os.fspath(directory)
    calls = load_calls(directory)
    graph = Graph()
    with graph.as_default():
        import_meta_graph(os.path.join(directory, GRAPH))
    with open(os.path.join(directory, INDEX), encoding="utf-8") as f:
        locations = json.load(f).get("locations", {})
    for op in graph.get_operations():  # errors name the recorded program's lines
        where = locations.get(op.name)
        if where is not None:
            op._traceback = (where[0], int(where[1]))
    cfg = ConfigProto()
    if config is not None:
        cfg.CopyFrom(config)
        cfg.experimental = type(cfg.experimental)()
        cfg.experimental.CopyFrom(config.experimental)
    cfg.experimental.deterministic = True
    cfg.experimental.record_inputs = ""
    sess = Session(graph=graph, config=cfg)

    main = [c for c in calls if c["stream"] == "main"]
    others: Dict[str, list] = {}
    for c in calls:
        stream = c["stream"]
        if stream.startswith("runner:"):
            queue, _, index = stream[len("runner:"):].rpartition(":")
            if int(index) < 0:
                continue  # a close_on_stop thread: when it ran was the program's choice
            others.setdefault("runner:" + queue, []).append(c)
        elif stream != "main":
            others.setdefault(stream, []).append(c)
    progress = _Progress()
    failures: list = []

    def run_stream(stream_calls):
        for c in stream_calls:
            if not progress.wait_for(c["main_done"]):
                return
            try:
                _run_call(sess, graph, directory, c)
            except errors.OpError as e:
                if c["error"] is None and not progress.stopped:
                    failures.append(ReplayMismatchError(
                        "call %d (step %d of stream %s) failed in the replay (%s: %s) but "
                        "succeeded when recorded" % (c["seq"], c["step"], c["stream"],
                                                     type(e).__name__, e.message)))
                return
            except RuntimeError:  # the session was closed: the replay is over
                return

    threads = [threading.Thread(target=run_stream, args=(cs,), daemon=True,
                                name="Replay-" + s) for s, cs in others.items()]
    result = Replay(sess, graph, threads, progress.stop)
    for t in threads:
        t.start()
    limit = len(main) if until_step is None else min(len(main), int(until_step) + 1)
    try:
        for c in main[:limit]:
            try:
                values = _run_call(sess, graph, directory, c)
            except errors.OpError as e:
                _check(c, None, e)
                raise
            _check(c, values, None)
            result.results.append(values)
            result.steps += 1
            progress.advance()
            if failures:
                raise failures[0]
    except BaseException:
        result.close()
        raise
    return result
