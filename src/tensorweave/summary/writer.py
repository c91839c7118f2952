"""`tf.summary.FileWriter`, `tf.summary.FileWriterCache` and `tf.train.summary_iterator`.

A FileWriter turns summaries, graphs, meta graphs, run metadata and session logs into
`Event` protocol buffers (TensorBoard's `event_pb2`) stamped with the wall time and an
optional global step, and hands them to an `EventFileWriter` (event_file_writer.py).
Graphs are written as TF's `GraphDef` message (framework/graph_def_proto.py), so
TensorBoard's graph tab shows them.
"""
from __future__ import annotations

import logging
import threading
import time
import warnings
from typing import Dict, Iterator, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.summary import event_file_writer as _efw

_log = logging.getLogger("tensorflow")


def _is_proto(obj, message: str) -> bool:
    """Whether `obj` is a `message` protocol buffer: TF's ("tensorflow.Summary") or
    TensorBoard's copy ("tensorboard.Summary")."""
    full_name = getattr(getattr(obj, "DESCRIPTOR", None), "full_name", None)
    return full_name in ("tensorflow." + message, "tensorboard." + message)


def _graph_def_proto(graph, graph_def):
    """The `tensorflow.GraphDef` message of a Graph, a GraphDef proto or our GraphDef."""
    from tensorweave.framework import graph_def_proto as _gdp
    from tensorweave.framework import serialize as _ser
    from tensorweave.framework.graph import Graph
    if graph is not None and graph_def is not None:
        raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
    given = graph if graph is not None else graph_def
    if isinstance(given, Graph):
        if graph is None:
            _log.warning("When passing a `Graph` object, please use the `graph` named "
                         "argument instead of `graph_def`.")
        return _gdp.graph_to_proto(given, add_shapes=True)
    if _is_proto(given, "GraphDef"):
        return given
    if isinstance(given, _ser.GraphDef):
        return _gdp.graph_def_to_proto(given)
    raise TypeError("The passed graph must be an instance of `Graph` or the deprecated "
                    "`GraphDef`")


def _meta_graph_proto(meta_graph_def):
    """The `tensorflow.MetaGraphDef` message of a MetaGraphDef proto or of our
    `tf.train.export_meta_graph` result (graph, tags, saver; collections are left out)."""
    if _is_proto(meta_graph_def, "MetaGraphDef"):
        return meta_graph_def
    from tensorweave.train.meta_graph import MetaGraphDef
    if not isinstance(meta_graph_def, MetaGraphDef):
        raise TypeError("meta_graph_def must be type MetaGraphDef, saw type: %s"
                        % type(meta_graph_def))
    from tensorboard.compat.proto import meta_graph_pb2
    from tensorweave.framework import graph_def_proto as _gdp
    out = meta_graph_pb2.MetaGraphDef()
    out.graph_def.CopyFrom(_gdp.graph_def_to_proto(meta_graph_def.graph_def))
    info = meta_graph_def.meta_info_def
    out.meta_info_def.tags.extend(getattr(info, "tags", None) or [])
    saver = meta_graph_def.saver_def
    if saver is not None:
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name",
                      "max_to_keep", "sharded", "keep_checkpoint_every_n_hours"):
            setattr(out.saver_def, field, getattr(saver, field))
    return out


def _run_metadata_proto(run_metadata):
    """The `tensorflow.RunMetadata` message of a RunMetadata proto or of ours (step
    stats with each kernel's timings, and the partition graphs)."""
    if _is_proto(run_metadata, "RunMetadata"):
        return run_metadata
    from tensorweave.runtime.config import RunMetadata
    if not isinstance(run_metadata, RunMetadata):
        raise TypeError("run_metadata must be a RunMetadata, saw type: %s"
                        % type(run_metadata))
    proto = RunMetadata._proto_class()()
    run_metadata._to_proto(proto)
    return proto


@tf_export("summary.FileWriter")
class FileWriter:
    """Writes `Summary` protocol buffers and other events to event files in `logdir`,
    for TensorBoard.

    The file is written by a background thread; `add_*` calls return at once (unless
    `max_queue` events are already waiting). Call `flush()` to make sure everything is
    on disk, and `close()` when done.

    Args:
      logdir: the directory where the event file is written (created if missing).
      graph: optional; a Graph written to the file at once (TensorBoard's graph tab).
      max_queue: how many events may be pending before an `add` call blocks.
      flush_secs: how often, in seconds, pending events are flushed to disk.
      graph_def: DEPRECATED: use `graph`.
      filename_suffix: appended to the event file's name.
      session: accepted for TF1 compatibility; events are written by this writer's
        thread in either case.
    """

    def __init__(self, logdir, graph=None, max_queue: int = 10, flush_secs: float = 120,
                 graph_def=None, filename_suffix: Optional[str] = None, session=None):
        self.event_writer = _efw.EventFileWriter(logdir, max_queue, flush_secs,
                                                 filename_suffix)
        self._closed = False
        self._session_run_tags: Dict[str, bool] = {}
        self._seen_summary_tags: set = set()
        if graph is not None or graph_def is not None:
            # the graph, and (as TF) a meta graph holding it
            from tensorboard.compat.proto import meta_graph_pb2
            proto = _graph_def_proto(graph, graph_def)
            self.add_graph(proto)
            meta = meta_graph_pb2.MetaGraphDef()
            meta.graph_def.CopyFrom(proto)
            self.add_meta_graph(meta)

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()

    def get_logdir(self) -> str:
        """The directory where the event file is written."""
        return self.event_writer.get_logdir()

    def _add_event(self, event, step) -> None:
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def add_event(self, event) -> None:
        """Adds an `Event` to the event file (a warning and no-op once closed)."""
        if self._closed:
            # TF warns through the warnings module here (not its logger)
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                          "noop unless the FileWriter is explicitly reopened.", stacklevel=2)
            return
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step: Optional[int] = None) -> None:
        """Adds a `Summary` protocol buffer (or its serialized bytes, as `sess.run` of a
        summary op returns) to the event file.

        A tag's plugin metadata is written only with its first value, as TF does.

        Args:
          summary: a `Summary` message or its serialized bytes.
          global_step: optional; the step the summary belongs to.

        Raises:
          TypeError: `summary` is neither.
        """
        from tensorboard.compat.proto import summary_pb2
        if isinstance(summary, (bytes, bytearray)):
            summary = summary_pb2.Summary.FromString(bytes(summary))
        elif _is_proto(summary, "Summary"):
            copy = summary_pb2.Summary()
            copy.CopyFrom(summary)
            summary = copy
        else:
            raise TypeError("add_summary expects a Summary protocol buffer or its "
                            "serialized bytes, got %s" % type(summary).__name__)
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
                continue
            self._seen_summary_tags.add(value.tag)
        self._add_event(_efw.event_pb2().Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step: Optional[int] = None) -> None:
        """Adds a `SessionLog` protocol buffer (START, STOP, CHECKPOINT) to the file."""
        self._add_event(_efw.event_pb2().Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step: Optional[int] = None, graph_def=None) -> None:
        """Adds a graph to the event file, as TF's `GraphDef` with output shapes.

        Args:
          graph: a Graph (or a GraphDef).
          global_step: optional; the step to record with the graph.
          graph_def: DEPRECATED: use `graph`.

        Raises:
          ValueError: both `graph` and `graph_def` are given.
          TypeError: `graph` is not a Graph or GraphDef.
        """
        proto = _graph_def_proto(graph, graph_def)
        self._add_event(_efw.event_pb2().Event(graph_def=proto.SerializeToString()),
                        global_step)

    def add_meta_graph(self, meta_graph_def, global_step: Optional[int] = None) -> None:
        """Adds a `MetaGraphDef` (a proto, or `tf.train.export_meta_graph`'s result) to
        the event file.

        Raises:
          TypeError: `meta_graph_def` is not a MetaGraphDef.
        """
        proto = _meta_graph_proto(meta_graph_def)
        self._add_event(_efw.event_pb2().Event(meta_graph_def=proto.SerializeToString()),
                        global_step)

    def add_run_metadata(self, run_metadata, tag: str, global_step: Optional[int] = None
                         ) -> None:
        """Adds the metadata of one `Session.run` (its step stats) under `tag`.

        Raises:
          ValueError: `tag` was already used by this writer.
        """
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags[tag] = True
        pb = _efw.event_pb2()
        tagged = pb.TaggedRunMetadata(
            tag=tag, run_metadata=_run_metadata_proto(run_metadata).SerializeToString())
        self._add_event(pb.Event(tagged_run_metadata=tagged), global_step)

    def flush(self) -> None:
        """Writes every pending event to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file; later `add` calls are no-ops (with a
        warning) until `reopen()`."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """After `close()`, starts writing to a new event file in the same directory."""
        self.event_writer.reopen()
        self._closed = False


@tf_export("summary.FileWriterCache")
class FileWriterCache:
    """One FileWriter per log directory, shared by everything that asks for it."""

    _cache: Dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached FileWriter."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir) -> FileWriter:
        """The FileWriter of `logdir`, created (with the default graph) on first use."""
        from tensorweave.framework.graph import get_default_graph
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir,
                                                            graph=get_default_graph())
            return FileWriterCache._cache[logdir]


@tf_export("train.summary_iterator")
def summary_iterator(path) -> Iterator:
    """Yields the `Event` protocol buffers of an event file, in order.

    Args:
      path: the path of an event file.

    Returns:
      An iterator of `Event` messages.

    Raises:
      NotFoundError: `path` does not exist (raised at once, as TF does).
      DataLossError: while iterating, a corrupted record.
    """
    from tensorweave.ops.io.record_io import tf_record_iterator
    records = tf_record_iterator(path)  # opens the file now
    return map(_efw.event_pb2().Event.FromString, records)
