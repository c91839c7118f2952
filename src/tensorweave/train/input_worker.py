"""An input worker process: runs the reading and decoding part of a QueueRunner's enqueue
op outside the training process, so that its Python work does not hold the training
process's GIL (input_processes.py starts it and feeds what it makes into the queue).

    python -m tensorweave.train.input_worker     (stdin and stdout carry the channel)

The parent sends one "setup" message: the subgraph (a serialized GraphDef) computing the
enqueue op's components from one reader, the names of those tensors, the name of the
filename queue op, and whether the enqueue takes a batch ("many"). The worker imports the
subgraph into a session of its own, where the filename queue is a `_WorkUnits` queue that
asks the parent for each file name when the reader needs one, and then runs the
components again and again, sending them as "data" messages: single elements are stacked
into batches of up to `max_rows` (sent sooner when `max_wait` seconds have passed or the
reader asks for a file). The first error ends the worker with an "end" message carrying
it (OutOfRangeError once the parent's filename queue is closed and drained). The worker
exits when its stdin closes: it never outlives its parent.
"""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from tensorweave.distribute import wire
from tensorweave.framework import dtypes
from tensorweave.ops.data_flow.queue_resources import QueueResource
from tensorweave.train.process_channel import Channel, ChannelClosed

# The filename queue's shared name in the worker's graph: the queue op finds the
# _WorkUnits registered under it instead of making a queue of its own.
WORK_QUEUE_NAME = "_tw_input_worker_work_units"


class _WorkUnits(QueueResource):
    """The filename queue as the worker sees it: it holds a file name only after asking
    the parent for one, and it asks once a reader waits on it empty."""

    def __init__(self, name, shapes, capacity, ask):
        super().__init__(name, [dtypes.string], shapes, capacity)
        self._ask = ask
        self._asking = False

    def dequeue_async(self, state, done, n=None, allow_smaller=False):
        with self._lock:
            ask = not (self._closed or self._asking or self._size())
            self._asking = self._asking or ask
        if ask:
            self._ask()
        super().dequeue_async(state, done, n, allow_smaller)

    def deliver(self, unit) -> None:
        """Puts the parent's answer in: a file name, or None once the parent's queue can
        give no more (then readers end with OutOfRangeError)."""
        with self._lock:
            self._asking = False
        if unit is None:
            if not self._closed:
                self.close()
        else:
            self.enqueue_async(None, [unit], lambda result=None, exc=None: None)


class _Batcher:
    """Collects the components of single-element runs into stacked batches."""

    def __init__(self, chan: Channel, many: bool, max_rows: int, max_wait: float):
        self._chan, self._many = chan, many
        self._max_rows, self._max_wait = max_rows, max_wait
        self._rows: list = []
        self._since = 0.0
        self._lock = threading.Lock()

    def add(self, values: list) -> None:
        # a fetched string scalar comes back as bytes, a number as a NumPy scalar
        values = [np.array(v, dtype=object) if isinstance(v, bytes) else np.asarray(v)
                  for v in values]
        if self._many:
            if len(values[0]):
                self._chan.send({"kind": "data"}, values)
            return
        with self._lock:
            if self._rows and any(a.shape != b.shape or a.dtype != b.dtype
                                  for a, b in zip(self._rows[0], values)):
                self._flush_locked()
            if not self._rows:
                self._since = time.monotonic()
            self._rows.append(values)
            if len(self._rows) >= self._max_rows or \
                    time.monotonic() - self._since >= self._max_wait:
                self._flush_locked()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._rows:
            rows, self._rows = self._rows, []
            self._chan.send({"kind": "data"},
                            [np.stack([r[i] for r in rows]) for i in range(len(rows[0]))])


def _build(meta: dict, graph_bytes: bytes, ask):
    """(session, runner of the components, the _WorkUnits) from the setup message."""
    import tensorweave as tf
    from tensorweave.framework import graph_def_proto

    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def_proto.parse_graph_def(graph_bytes), name="")
        queue_op = graph.get_operation_by_name(meta["work_queue"])
        shapes = [None if s.dims is None else tuple(s.as_list())
                  for s in queue_op._get_attr("shapes")]
        units = _WorkUnits(meta["work_queue_name"], shapes, queue_op._get_attr("capacity"),
                           ask)
        sess = tf.Session(graph=graph)
        for device in sess._device_manager.devices:
            device.resources.lookup_or_create("", WORK_QUEUE_NAME, lambda: units)
        run = sess.make_callable([graph.get_tensor_by_name(n) for n in meta["fetches"]])
    return sess, run, units


def _listen(chan: Channel, units_box: list) -> None:
    """Answers from the parent: file names for the reader; exits when the parent goes."""
    try:
        while True:
            meta, arrays = chan.recv()
            if meta.get("kind") == "work":
                units_box[0].deliver(arrays[0] if arrays else None)
            elif meta.get("kind") == "stop":
                break
    except ChannelClosed:
        pass
    os._exit(0)  # the parent stopped us, or is gone: nothing of ours is worth finishing


def main() -> int:
    # The channel owns the real stdout; whatever else writes to fd 1 (print, a C
    # library) goes to stderr.
    channel_out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    chan = Channel(open(0, "rb", buffering=0), open(channel_out, "wb", buffering=0))
    from tensorweave.framework import errors
    try:
        meta, arrays = chan.recv()
    except ChannelClosed:
        return 0
    units_box: list = [None]
    batcher = _Batcher(chan, meta["many"], meta["max_rows"], meta["max_wait"])

    def ask():
        batcher.flush()  # whoever waits for these rows must not wait on our next file
        chan.send({"kind": "work"})

    try:
        sess, run, units_box[0] = _build(meta, arrays[0].item(), ask)
    except Exception as e:  # noqa: BLE001 - reported; the parent runs the op itself
        chan.send(dict(wire.error_meta(e), kind="failed"))
        return 1
    threading.Thread(target=_listen, args=(chan, units_box), daemon=True,
                     name="input-worker-listen").start()
    chan.send({"kind": "ready"})
    try:
        while True:
            try:
                values = run()
            except errors.OpError as e:
                batcher.flush()
                chan.send(dict(wire.error_meta(e), kind="end",
                               op=e.op.name if e.op is not None else None))
                break
            except Exception as e:  # noqa: BLE001 - a bug: reported as InternalError
                chan.send(dict(wire.error_meta(e), kind="end"))
                raise
            batcher.add(values)
    except ChannelClosed:
        return 0
    sess.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
