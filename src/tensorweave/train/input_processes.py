"""QueueRunner enqueue ops whose reading and decoding run in worker processes.

A QueueRunner thread runs its enqueue op in a loop (paper §3.2). When that op's inputs
come from one reader (`reader.read` or `read_up_to` on a filename queue) through ops
that touch no other state (decoders, reshapes, casts, string and math ops), the thread
instead starts an input worker process (input_worker.py) that runs that subgraph, and
itself only puts the batches the worker sends into the queue. The per-record Python work
of reading and decoding then holds the worker's GIL, not the training process's.

What stays as in TF1:
  * the filename queue stays in this process: the worker asks for each file name when
    its reader needs one, so num_epochs, shuffling of file names and the end of input
    (OutOfRangeError, then the runner closes the queue) are unchanged;
  * errors of the reading ops (a corrupt record, a missing file) reach the runner with
    their TF class, naming the op of this graph that failed;
  * the coordinator's stop, the cancel op and Session.close end the thread, and its
    worker with it.
What differs: each thread of a runner has a reader of its own (in its worker), like
`shuffle_batch_join` with one reader per thread, so the reader op's counters in this
process do not move; single elements arrive in batches of up to `_MAX_ROWS`. A subgraph
that uses any other state (variables, tables, random ops, py_func), a reader whose
handle has other users (its counters, serialize_state), a shared reader, a session on a
cluster target and the deterministic mode keep the thread, as do the threads beyond the
places for workers: by default one per core beyond the two the training process keeps
busy (`_worker_places`), and four more for subgraphs that do Python work record by
record (`_PER_RECORD`: parsing CSV fields, Example protos or numbers in strings, or
reading TFRecords, whose framing and CRC are checked record by record), heavy enough to
pay for a worker even on a 2-core machine (`_per_record_places`).
`TW_INPUT_PROCESSES=1` allows one per core (at least two) for any subgraph, `=0` turns
them off.
"""
from __future__ import annotations

import io
import logging
import os
import sys
import threading
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import upstream_ops
from tensorweave.ops.math import blas

_log = logging.getLogger("tensorflow")

ENV = "TW_INPUT_PROCESSES"
_ENQUEUES = {"QueueEnqueueV2": False, "QueueEnqueueManyV2": True}   # type -> many
_READS = ("ReaderReadV2", "ReaderReadUpToV2")
_READERS = ("TextLineReaderV2", "FixedLengthRecordReaderV2", "TFRecordReaderV2",
            "IdentityReaderV2", "WholeFileReaderV2")
# Stateful in TF's registry (never pruned or folded), yet touching no state that lives
# beyond one step: checks, prints, and the TensorArrays and stacks of a step's loops
# (tf.map_fn over the examples of a batch).
_HARMLESS = frozenset({"Assert", "_AssertCompare", "_AssertNear", "_AssertRank",
                       "CheckNumerics", "Print", "PrintV2", "ControlTrigger",
                       "GuaranteeConst", "Timestamp"})
_HARMLESS_PREFIXES = ("TensorArray", "Stack")
# Ops that do Python work record by record (they parse text or protos, or check each
# TFRecord's framing and CRC): their subgraphs may take the extra places of
# `_per_record_places`.
_PER_RECORD = frozenset({"DecodeCSV", "StringToNumber", "ParseExample", "ParseExampleV2",
                         "ParseSingleExample", "ParseSequenceExampleV2",
                         "DecodeJSONExample", "ParseTensor", "TFRecordReaderV2"})
# Places for worker processes alive at once in this process (made on first use; see
# `_worker_places`): a runner's threads beyond them run their op in this process.
_WORKERS: Optional[threading.BoundedSemaphore] = None
# The extra places only subgraphs of `_PER_RECORD` ops may take (`_per_record_places`).
_PER_RECORD_WORKERS: Optional[threading.BoundedSemaphore] = None
_WORKERS_LOCK = threading.Lock()
_MAX_ROWS = 64       # single elements stacked per message
_MAX_WAIT = 0.02     # seconds a started batch of single elements may wait for more
_PIPE_BYTES = 1 << 20
# seconds an enqueue waits for room before the worker counts as idle for BLAS (ops/math/
# blas.py); a queue the training steps drain frees room sooner
_IDLE_AFTER = 0.005


def enabled() -> bool:
    """Whether enqueue ops may run their reading in worker processes (TW_INPUT_PROCESSES)."""
    return os.environ.get(ENV, "") != "0"


def _worker_places() -> int:
    """How many worker processes may run at once. A worker pays for itself only with a
    core of its own: the training process keeps two busy (its steps, and NumPy's BLAS
    threads, which spin between products). On 16 cores the workers won (TFRecord +
    decode_raw 1.40 against 1.74, CSV 1.58 against 3.81; benchmarks/RESULTS.md). So by
    default one per core beyond two, and `_per_record_places` more for subgraphs of
    `_PER_RECORD` ops; TW_INPUT_PROCESSES=1 allows one per core (at least two) whatever
    the machine, =0 none."""
    cores = os.cpu_count() or 1
    setting = os.environ.get(ENV, "")
    if setting == "0":
        return 0
    if setting == "1":
        return max(2, cores)
    return max(0, cores - 2)


def _per_record_places() -> int:
    """How many more worker processes subgraphs of `_PER_RECORD` ops may run, beyond
    `_worker_places`: four by default (none on one core), the reading threads of two
    shuffle_batch(num_threads=2) runners (a training and an evaluation pipeline); a
    worker whose queue is full waits on its pipe and takes no CPU. Such work holds the
    GIL record by record (decode_csv about 1.4 us a record, a TFRecord's framing and
    CRC about 0.3), so in threads it serializes with the training steps, which then
    wait for data. On a 2-core machine (benchmarks/input_pipeline.py, both pipelines in
    one process; sustained mean step over the step fed from memory): CSV + decode_csv
    2.80-2.85 in threads, 1.68-1.86 in workers (TensorFlow's own 1.91); TFRecords of
    Examples + parse_example about 2.5 against 1.9; TFRecord + decode_raw 1.81-2.29 in
    threads, 1.64-1.78 in workers (three rounds each; before the training step's
    products moved to oneDNN the threads had won, 1.7 against 1.9-2.0). One worker and
    one thread gave 3.1 for CSV (the thread still holds the GIL). TW_INPUT_PROCESSES
    set: none beyond `_worker_places`."""
    if os.environ.get(ENV, "") in ("0", "1"):
        return 0
    return 4 if (os.cpu_count() or 1) >= 2 else 0


def _semaphores() -> tuple:
    global _WORKERS, _PER_RECORD_WORKERS
    if _WORKERS is None or _PER_RECORD_WORKERS is None:
        with _WORKERS_LOCK:
            if _WORKERS is None:
                _WORKERS = threading.BoundedSemaphore(_worker_places())
            if _PER_RECORD_WORKERS is None:
                _PER_RECORD_WORKERS = threading.BoundedSemaphore(_per_record_places())
    return _WORKERS, _PER_RECORD_WORKERS


def _take_place(per_record: bool):
    """A place for one worker process (the semaphore to give it back to), or None."""
    general, extra = _semaphores()
    if general.acquire(blocking=False):
        return general
    if per_record and extra.acquire(blocking=False):
        return extra
    return None


class Producer:
    """What a worker process needs to make an enqueue op's components, and where they go.

    Attributes:
      graph_def: the serialized subgraph (the components and everything they need).
      fetches: names of the component tensors.
      work_queue: the filename queue op (its handle tensor is `work_queue.outputs[0]`).
      target: the handle tensor of the queue the enqueue op fills.
      many: whether the enqueue op takes a batch (QueueEnqueueManyV2).
      per_record: whether the subgraph does Python work record by record (an op of
        `_PER_RECORD`).
    """

    def __init__(self, enqueue_op, graph_def: bytes, work_queue, many: bool,
                 per_record: bool = False):
        self.enqueue_op = enqueue_op
        self.graph_def = graph_def
        self.fetches = [t.name for t in enqueue_op.inputs[1:]]
        self.work_queue = work_queue
        self.target = enqueue_op.inputs[0]
        self.many = many
        self.per_record = per_record


def producer_of(enqueue_op) -> Optional[Producer]:
    """The Producer of `enqueue_op` if a worker process can run its inputs, else None."""
    many = _ENQUEUES.get(enqueue_op.type)
    if many is None or enqueue_op.control_inputs or len(enqueue_op.inputs) < 2:
        return None
    ops = upstream_ops([t.op for t in enqueue_op.inputs[1:]])
    reads = [op for op in ops if op.type in _READS]
    if len(reads) != 1:
        return None
    read = reads[0]
    reader, queue = read.inputs[0].op, read.inputs[1].op
    if reader.type not in _READERS or queue.type != "FIFOQueueV2":
        return None
    if queue._get_attr("component_types") != [_dt.string]:
        return None
    if reader._get_attr("shared_name") or reader._get_attr("container"):
        return None  # other sessions or graphs may read through it
    if any(c is not read for c in reader.outputs[0].consumers()):
        return None  # its counters or state are used here: it must stay in this process
    for op in ops:
        if op in (read, reader, queue) or op.type in _HARMLESS or \
                op.type.startswith(_HARMLESS_PREFIXES):
            continue
        if _reg.get_op_def(op.type).stateful:
            return None
    return Producer(enqueue_op, _subgraph(enqueue_op, queue), queue, many,
                    per_record=any(op.type in _PER_RECORD for op in ops))


def _subgraph(enqueue_op, queue) -> bytes:
    """The serialized GraphDef of the components' ancestors, placed nowhere in particular,
    with the filename queue renamed to the worker's stand-in (input_worker.py)."""
    from tensorweave.framework import graph_def_proto, graph_util
    from tensorweave.train.input_worker import WORK_QUEUE_NAME
    # a tensorweave process runs it: the private ops keep their fused kernels
    graph_def = graph_util.extract_sub_graph(
        graph_def_proto.graph_to_proto(enqueue_op.graph, lower=False),
        sorted({t.op.name for t in enqueue_op.inputs[1:]}))
    for node in graph_def.node:
        node.device = ""
        if node.name == queue.name:
            node.attr["shared_name"].s = WORK_QUEUE_NAME.encode()
            node.attr["container"].s = b""
    return graph_def.SerializeToString()


def feeder_for(sess, enqueue_op) -> Optional["ProcessFeeder"]:
    """A ProcessFeeder running `enqueue_op`'s inputs in a worker process, or None where
    the op must run in this process (see the module docstring)."""
    if not enabled() or getattr(sess, "_target", "") or getattr(sess, "_closed", False):
        return None
    from tensorweave.runtime import determinism
    if determinism.of_session(sess):
        return None
    producer = producer_of(enqueue_op)
    place = None if producer is None else _take_place(producer.per_record)
    if place is None:
        return None
    try:
        return ProcessFeeder(sess, producer, place)
    except BaseException as e:
        place.release()
        if not isinstance(e, OSError):
            raise
        # no way to start a process here: the thread runs the op
        _log.warning("Could not start an input worker process for %s (%s); running it "
                     "in this process.", enqueue_op.name, e)
        return None


def _worker_env() -> dict:
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(
        sys.modules["tensorweave"].__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    # decoding needs no BLAS threads, and the training process needs the cores
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    env[ENV] = "0"
    return env


class ProcessFeeder:
    """One QueueRunner thread's worker process, and the enqueueing of what it makes.

    `step()` takes the place of one run of the enqueue op: it puts the worker's next batch
    into the queue, answering the worker's requests for file names meanwhile, and raises
    what the enqueue op would (OutOfRangeError at the end of input, CancelledError once
    the queue is closed, the reading ops' errors). A worker that cannot build its
    subgraph hands the op back to this process: `step()` then runs the op itself.
    """

    def __init__(self, sess, producer: Producer, place: threading.BoundedSemaphore):
        import subprocess  # here: `import tensorweave` does not need it
        from tensorweave.train.process_channel import Channel
        self._sess = sess
        self._op = producer.enqueue_op
        self._fallback = None
        self._place = place  # the semaphore feeder_for took this worker's place from
        target, units = sess.run([producer.target, producer.work_queue.outputs[0]])
        self._target, self._units = target.queue, units.queue
        self._work_error: Optional[errors.OpError] = None
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tensorweave.train.input_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=_worker_env())
        self._state = sess._env.begin_service()
        _grow_pipe(self._proc.stdout)
        # buffered: one read takes in what the pipe holds (often several batches), so a
        # batch's header and arrays cost no read of their own, and no GIL hand-off each
        self._chan = Channel(io.BufferedReader(self._proc.stdout, _PIPE_BYTES),
                             self._proc.stdin)
        self._state.add_cancel_callback(lambda exc: self._stop_worker())
        self._chan.send({"kind": "setup", "fetches": producer.fetches,
                         "work_queue": producer.work_queue.name,
                         "work_queue_name": self._units.name, "many": producer.many,
                         "max_rows": _MAX_ROWS, "max_wait": _MAX_WAIT},
                        [np.array(producer.graph_def, dtype=object)])

    @property
    def pid(self) -> int:
        return self._proc.pid

    def step(self) -> None:
        """Enqueues the worker's next batch (see the class docstring)."""
        if self._fallback is not None:
            return self._fallback()
        from tensorweave.train.process_channel import ChannelClosed
        while True:
            try:
                meta, arrays = self._chan.recv()
            except ChannelClosed:
                self._raise_stopped()
            kind = meta.get("kind")
            if kind == "data":
                # the worker is busy on a core: BLAS stops splitting products now (ops/
                # math/blas.py), not at its next reading of the machine's load
                blas.note_helper_work()
                return self._enqueue(arrays)
            if kind == "work":
                self._units.dequeue_async(self._state, self._answer)
            elif kind == "end":
                self._raise_end(meta)
            elif kind == "failed":
                _log.warning("Input worker process could not run %s (%s: %s); running it "
                             "in this process.", self._op.name, meta["error"]["class"],
                             meta["error"]["message"])
                self._stop_worker()
                self._give_place_back()
                self._fallback = self._sess.make_callable(self._op)
                return self._fallback()

    def _answer(self, result=None, exc=None) -> None:
        """The filename queue's answer to the worker's request for a file name."""
        from tensorweave.train.process_channel import ChannelClosed
        if exc is not None:
            self._work_error = exc
        try:
            self._chan.send({"kind": "work"}, [result[0]] if exc is None else None)
        except ChannelClosed:
            pass  # the worker is gone; step() reports why

    def _enqueue(self, arrays: List[np.ndarray]) -> None:
        finished = threading.Event()
        box: list = []

        def done(result=None, exc=None):
            box.append(exc)
            finished.set()
        self._target.enqueue_async(self._state, arrays, done, many=True)
        if not finished.wait(_IDLE_AFTER):
            # no room for a while: training has data, and the worker stops once the
            # pipe is full too; BLAS may split products again
            blas.note_helper_work(busy=False)
            finished.wait()
        if box[0] is not None:
            raise type(box[0])(None, self._op, box[0].message)

    def _raise_end(self, meta: dict) -> None:
        from tensorweave.distribute import wire
        err = meta.get("error") or {}
        cls = wire.error_class(err)
        if cls is errors.OutOfRangeError and self._work_error is not None and \
                not isinstance(self._work_error, errors.OutOfRangeError):
            # the filename queue failed otherwise (a cancelled step): report that
            raise type(self._work_error)(None, self._op, self._work_error.message)
        op = None
        if meta.get("op"):
            try:
                op = self._op.graph.get_operation_by_name(meta["op"])
            except (KeyError, ValueError):
                op = None
        raise cls(None, op if op is not None else self._op, err.get("message", ""))

    def _raise_stopped(self) -> None:
        if self._state.cancelled is not None:
            exc = self._state.cancelled
            raise type(exc)(None, self._op, exc.message)
        code = self._proc.wait()
        raise errors.InternalError(None, self._op, "The input worker process of %s exited "
                                   "with code %s" % (self._op.name, code))

    def _stop_worker(self) -> None:
        import subprocess
        try:
            self._proc.stdin.close()  # the worker exits when its stdin closes
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def close(self) -> None:
        """Stops the worker process and forgets the feeder's step."""
        self._stop_worker()
        self._chan.close()
        self._sess._env.end_step(self._state)
        self._give_place_back()

    def _give_place_back(self) -> None:
        place, self._place = self._place, None
        if place is not None:
            place.release()


def _grow_pipe(f) -> None:
    """A 1 MiB pipe buffer (Linux): the worker runs ahead of the queue by a few batches
    rather than by 64 KiB."""
    try:
        import fcntl
        fcntl.fcntl(f.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):
        pass
