"""train.QueueRunner and the queue-runner collection helpers.

A QueueRunner holds a queue and the enqueue ops that fill it. `create_threads` starts one
Python thread per enqueue op, each running its op in a loop as concurrent steps of the
same session (paper §3.2): the I/O and preprocessing subgraphs of Figure 1. The queue's
blocking gives backpressure; closing it ends the consumers with OutOfRangeError once it
is drained. In the deterministic mode (runtime/determinism.py) the threads of one runner
take turns in a fixed round-robin order, one run of their enqueue op per turn. An enqueue
op fed by a reader may have its reading and decoding run in a worker process
(input_processes.py); its thread then only enqueues what the worker makes.
"""
from __future__ import annotations

import functools
import logging
import threading
import weakref
from typing import List, Optional

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.runtime import determinism as _determinism

_log = logging.getLogger("tensorflow")


def _prepend_scope(name: str, import_scope: Optional[str]) -> str:
    return "%s/%s" % (import_scope, name) if import_scope else name


def _strip_scope(name: str, export_scope: Optional[str]) -> str:
    if export_scope and name.startswith(export_scope + "/"):
        return name[len(export_scope) + 1:]
    return name


class QueueRunnerDef:
    """The serialized form of a QueueRunner (TF's QueueRunnerDef protocol buffer):
    names of the queue, its enqueue ops, close and cancel ops, and the error codes that
    mean "the queue was closed"."""

    def __init__(self, queue_name: str = "", enqueue_op_name=(), close_op_name: str = "",
                 cancel_op_name: str = "", queue_closed_exception_types=()):
        self.queue_name = queue_name
        self.enqueue_op_name = list(enqueue_op_name)
        self.close_op_name = close_op_name
        self.cancel_op_name = cancel_op_name
        self.queue_closed_exception_types = [int(c) for c in queue_closed_exception_types]

    def __eq__(self, other):
        return isinstance(other, QueueRunnerDef) and vars(self) == vars(other)

    def __repr__(self):
        return "QueueRunnerDef(%s)" % ", ".join("%s=%r" % kv for kv in vars(self).items())

    def SerializeToString(self) -> bytes:  # noqa: N802 (protobuf's name)
        """TF's `QueueRunnerDef` message, as a MetaGraphDef's "queue_runners" holds it."""
        return _queue_runner_message()(**vars(self)).SerializeToString()

    @classmethod
    def FromString(cls, data: bytes) -> "QueueRunnerDef":  # noqa: N802
        m = _queue_runner_message().FromString(data)
        return cls(m.queue_name, m.enqueue_op_name, m.close_op_name, m.cancel_op_name,
                   m.queue_closed_exception_types)


@functools.lru_cache(maxsize=None)
def _queue_runner_message():
    """The protobuf class of tensorflow/core/protobuf/queue_runner.proto's
    QueueRunnerDef, made from its schema (the `tensorboard` package, whose message
    classes the rest of our formats use, does not ship this one). Its
    queue_closed_exception_types field is TF's error-code enum; a packed repeated int32
    has the same wire form."""
    from google.protobuf import descriptor_pb2
    f = descriptor_pb2.FileDescriptorProto(
        name="tensorweave/queue_runner.proto", package="tensorflow", syntax="proto3")
    m = f.message_type.add(name="QueueRunnerDef")
    fields = descriptor_pb2.FieldDescriptorProto
    for number, name, kind, label in (
            (1, "queue_name", fields.TYPE_STRING, fields.LABEL_OPTIONAL),
            (2, "enqueue_op_name", fields.TYPE_STRING, fields.LABEL_REPEATED),
            (3, "close_op_name", fields.TYPE_STRING, fields.LABEL_OPTIONAL),
            (4, "cancel_op_name", fields.TYPE_STRING, fields.LABEL_OPTIONAL),
            (5, "queue_closed_exception_types", fields.TYPE_INT32,
             fields.LABEL_REPEATED)):
        m.field.add(name=name, number=number, type=kind, label=label)
    from tensorweave.framework.proto_classes import message_classes
    return message_classes([f], ["tensorflow.QueueRunnerDef"])["tensorflow.QueueRunnerDef"]


@tf_export("train.QueueRunner", "train.queue_runner.QueueRunner")
class QueueRunner:
    """Holds a list of enqueue ops for a queue, each to be run in a thread.

    Args:
      queue: the queue (a `tf.FIFOQueue` or other queue object).
      enqueue_ops: list of enqueue ops to run in threads (the same op may appear
        several times: it is then run by as many threads).
      close_op: op closing the queue, run when the last enqueue thread ends; defaults
        to `queue.close()` (pending enqueues are kept).
      cancel_op: op run when the coordinator requests a stop; defaults to
        `queue.close(cancel_pending_enqueues=True)`.
      queue_closed_exception_types: tuple of `tf.errors` classes meaning "the queue
        was closed": an enqueue thread raising one ends quietly. Defaults to
        `(tf.errors.OutOfRangeError,)`.
      queue_runner_def: a QueueRunnerDef to rebuild the runner from, in the default
        graph (exclusive with `queue`/`enqueue_ops`).
      import_scope: name scope prepended to the names in `queue_runner_def`.

    Raises:
      ValueError: no queue or enqueue ops, or both them and `queue_runner_def`.
      TypeError: `queue_closed_exception_types` is not a tuple of OpError classes.
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope: Optional[str] = None):
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
        else:
            self._init_from_args(queue, enqueue_ops, close_op, cancel_op,
                                 queue_closed_exception_types)
        # Guards _runs_per_session and _exceptions_raised.
        self._lock = threading.Lock()
        # session -> number of its enqueue threads still running.
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised: List[BaseException] = []

    def _init_from_args(self, queue, enqueue_ops, close_op, cancel_op, closed_types):
        if queue is None or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        if closed_types is not None:
            if (not isinstance(closed_types, tuple) or not closed_types or not all(
                    isinstance(t, type) and issubclass(t, errors.OpError)
                    for t in closed_types)):
                raise TypeError("queue_closed_exception_types, when provided, must be a "
                                "tuple of tf.error types, but saw: %s" % (closed_types,))
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        # Normal end: no more elements will come, but those already enqueued stay.
        self._close_op = close_op if close_op is not None else queue.close()
        # Stop request: also cancel blocked enqueues so every thread can exit.
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = closed_types or (errors.OutOfRangeError,)

    def _init_from_proto(self, qr_def: QueueRunnerDef, import_scope: Optional[str]):
        if not isinstance(qr_def, QueueRunnerDef):
            raise TypeError("queue_runner_def must be a QueueRunnerDef, got %s"
                            % type(qr_def).__name__)
        g = _graph.get_default_graph()

        def lookup(name):
            return g.as_graph_element(_prepend_scope(name, import_scope))
        self._queue = _QueueByName(lookup(qr_def.queue_name))
        self._enqueue_ops = [lookup(n) for n in qr_def.enqueue_op_name]
        self._close_op = lookup(qr_def.close_op_name)
        self._cancel_op = lookup(qr_def.cancel_op_name)
        self._queue_closed_exception_types = tuple(
            errors.exception_type_from_error_code(c)
            for c in qr_def.queue_closed_exception_types) or (errors.OutOfRangeError,)

    # --- properties ---------------------------------------------------------------------
    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        """Exceptions raised by the enqueue threads that had no coordinator to report
        them to."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue."""
        return self._queue.name

    # --- threads ------------------------------------------------------------------------
    def _enqueue_fn(self, sess, enqueue_op, index: int):
        """(a callable running `enqueue_op` once, the input_processes feeder behind it or
        None: closed when the thread ends). Subclasses that feed their runs override
        this."""
        # the reading and decoding may run in a worker process (imported here:
        # subprocess is not needed by `import tensorweave`)
        from tensorweave.train import input_processes
        feeder = input_processes.feeder_for(sess, enqueue_op)
        if feeder is not None:
            return feeder.step, feeder
        return sess.make_callable(enqueue_op), None

    def _run(self, sess, enqueue_op, coord, turns=None, index: int = 0) -> None:
        """Body of one enqueue thread: runs `enqueue_op` until the queue closes, the
        coordinator stops, or an error; the last thread to end closes the queue. With
        `turns` (a determinism.Turnstile: the session's deterministic mode) the threads
        of this runner take turns, each turn one run of its enqueue op."""
        counted = True  # this thread is still counted in _runs_per_session[sess]
        feeder = None
        if turns is not None:
            _determinism.set_stream((self.name, index))
        try:
            enqueue, feeder = self._enqueue_fn(sess, enqueue_op, index)
            while not (coord is not None and coord.should_stop()):
                try:
                    if turns is None:
                        enqueue()
                    else:
                        turns.enter(index)
                        enqueue()
                        turns.exit(index)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        counted = False
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # the queue may already be closed
                                _log.debug("Ignored exception: %s", e)
                    return
        except Exception as e:
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if feeder is not None:
                feeder.close()
            if turns is not None:
                turns.leave(index)
            if counted:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord) -> None:
        """Body of the extra thread: on a stop request, cancels the queue so enqueue
        threads blocked on a full queue wake up and end."""
        _determinism.set_stream((self.name, -1))  # not replayed (tensorweave/replay.py)
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as e:  # the session may be closed already
            _log.debug("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon: bool = False,
                       start: bool = False) -> List[threading.Thread]:
        """Creates the threads running the enqueue ops in `sess`.

        One thread per enqueue op, plus, with a coordinator, one thread that runs the
        cancel op when a stop is requested. All are registered with `coord`. If threads
        of this runner are already running for `sess`, returns an empty list.

        Args:
          sess: the Session to run the ops in.
          coord: optional Coordinator; errors of the threads are reported to it.
          daemon: make the threads daemons.
          start: start the threads before returning.

        Returns:
          The list of threads.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        # the deterministic mode: the threads take turns in a fixed order
        turns = _determinism.Turnstile(len(self._enqueue_ops)) \
            if _determinism.of_session(sess) else None
        threads = [threading.Thread(target=self._run, args=(sess, op, coord, turns, i),
                                    name="QueueRunnerThread-%s-%s" % (self.name, op.name))
                   for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, coord),
                name="QueueRunnerThread-%s-close_on_stop" % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads

    # --- serialization ------------------------------------------------------------------
    def to_proto(self, export_scope: Optional[str] = None) -> Optional[QueueRunnerDef]:
        """A QueueRunnerDef with names relative to `export_scope`, or None if the queue
        is outside that scope."""
        if export_scope is not None and not self.queue.name.startswith(export_scope + "/"):
            return None
        return QueueRunnerDef(
            queue_name=_strip_scope(self.queue.name, export_scope),
            enqueue_op_name=[_strip_scope(op.name, export_scope)
                             for op in self._enqueue_ops],
            close_op_name=_strip_scope(self._close_op.name, export_scope),
            cancel_op_name=_strip_scope(self._cancel_op.name, export_scope),
            queue_closed_exception_types=[
                errors.error_code_from_exception_type(t)
                for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def: QueueRunnerDef,
                   import_scope: Optional[str] = None) -> "QueueRunner":
        """A QueueRunner rebuilt from `queue_runner_def` in the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


class _QueueByName:
    """The queue of a QueueRunner rebuilt from a QueueRunnerDef: TF keeps only the
    queue's handle there, so `.name` (and `.queue_ref`) is all it offers."""

    def __init__(self, element):
        self.queue_ref = element if isinstance(element, _graph.Tensor) else None
        self.op = element if isinstance(element, _graph.Operation) else element.op
        self.name = self.op.name


@tf_export("train.add_queue_runner", "train.queue_runner.add_queue_runner")
def add_queue_runner(qr: QueueRunner, collection: str = _graph.GraphKeys.QUEUE_RUNNERS):
    """Adds `qr` to the graph collection `collection` (default `QUEUE_RUNNERS`), where
    `start_queue_runners` finds it."""
    _graph.add_to_collection(collection, qr)


@tf_export("train.start_queue_runners", "train.queue_runner.start_queue_runners")
def start_queue_runners(sess=None, coord=None, daemon: bool = True, start: bool = True,
                        collection: str = _graph.GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in the graph collection `collection`.

    Args:
      sess: the Session; defaults to the default session.
      coord: optional Coordinator for the threads.
      daemon: make the threads daemons.
      start: start the threads (else only create them).
      collection: the collection holding the runners.

    Returns:
      The list of all threads.

    Raises:
      ValueError: no `sess` and no default session.
      TypeError: `sess` is not a Session.
    """
    from tensorweave.runtime.session import BaseSession, get_default_session
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is "
                             "registered. Use `with sess.as_default()` or pass an explicit "
                             "session to tf.start_queue_runners(sess=sess)")
    if not isinstance(sess, BaseSession):
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []  # they start their queue runners themselves (as in TF)
        raise TypeError("sess must be a `tf.Session` object. Given class: %s"
                        % sess.__class__)
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning("`tf.train.start_queue_runners()` was called when no queue runners "
                     "were defined. You can safely remove the call to this deprecated "
                     "function.")
    threads = []
    with sess.graph.as_default():
        for qr in runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
