"""`tf.train.Server`: one task of a cluster, serving the worker service over gRPC.

gRPC with generic handlers carries the messages of distribute/wire.py as raw bytes
(service "tensorweave.Worker", one unary method per handler of WorkerService). A server
binds the address the cluster spec gives its task; "localhost" binds 127.0.0.1 only.
With TW_CLUSTER_TOKEN set, every call must carry the same token (metadata
"tw-token"): a call without it is refused (UNAUTHENTICATED) and logged. With
TW_TLS_CERT and TW_TLS_KEY (PEM files) a server speaks TLS only, and channels verify
the tasks against TW_TLS_CA (default: TW_TLS_CERT).

`Channels` is the client side, shared by a task's worker (Recvs from other tasks) and a
client's master: one gRPC channel per task, gRPC failures mapped to TF's error classes
naming the task.
"""
from __future__ import annotations

import concurrent.futures
import concurrent.futures.thread  # registers its exit join first, so ours runs before it
import logging
import os
import queue
import threading
from typing import Dict, Optional

from tensorweave.distribute import wire
from tensorweave.distribute.cluster import ClusterSpec
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export

logger = logging.getLogger("tensorflow")

SERVICE = "tensorweave.Worker"
_OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
# a task that comes back (restarted on its address) is reached again within a second:
# gRPC's default reconnect backoff grows to two minutes while calls keep failing
_CHANNEL_OPTIONS = _OPTIONS + [("grpc.initial_reconnect_backoff_ms", 100),
                               ("grpc.min_reconnect_backoff_ms", 100),
                               ("grpc.max_reconnect_backoff_ms", 1000)]
_TOKEN_KEY = "tw-token"
BATCH_BYTES = 1 << 20  # messages queued for one stream go as one batch up to this size


def _token() -> Optional[str]:
    return os.environ.get("TW_CLUSTER_TOKEN") or None


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def server_credentials():
    """TLS credentials of a server when TW_TLS_CERT and TW_TLS_KEY name PEM files (its
    certificate chain and key), else None (plain connections)."""
    cert, key = os.environ.get("TW_TLS_CERT"), os.environ.get("TW_TLS_KEY")
    if not (cert and key):
        return None
    import grpc
    return grpc.ssl_server_credentials(((_read(key), _read(cert)),))


def channel_credentials():
    """TLS credentials of the channels to tasks when TW_TLS_CA (or TW_TLS_CERT) names
    the PEM certificate that signs the tasks' certificates, else None."""
    ca = os.environ.get("TW_TLS_CA") or os.environ.get("TW_TLS_CERT")
    if not ca:
        return None
    import grpc
    return grpc.ssl_channel_credentials(root_certificates=_read(ca))


def task_name(job: str, index: int) -> str:
    return "/job:%s/replica:0/task:%d" % (job, index)


def parse_task(task: str):
    """("ps", 1) of "/job:ps/replica:0/task:1"."""
    parts = dict(p.split(":", 1) for p in task.strip("/").split("/"))
    return parts["job"], int(parts["task"])


def bind_address(address: str) -> str:
    """Where a server for `address` listens: "localhost" means 127.0.0.1 only."""
    host, _, port = address.rpartition(":")
    if host in ("", "localhost"):
        host = "127.0.0.1"
    return "%s:%s" % (host, port)


class _RequestStream:
    """One open bidirectional stream of requests to a task, answered in any order:
    each request carries an id its answer repeats. Cheaper than a call per request
    (a round trip on an open stream costs about half a unary call here)."""

    def __init__(self, channels: "Channels", task: str, method: str):
        import grpc
        self.task = task
        self._grpc = grpc
        self._requests: "queue.SimpleQueue" = queue.SimpleQueue()
        self._pending: Dict[int, object] = {}
        self._lock = threading.Lock()
        self._next_id = 0
        self.broken: Optional[errors.OpError] = None
        stub = channels._stub(task, method, kind="stream_stream")
        self._responses = stub(self._outgoing(), metadata=channels._metadata)
        threading.Thread(target=self._read, name="tw-stream", daemon=True).start()

    def _outgoing(self):
        """The messages to send; those that queued up while gRPC sent the last one go
        as one batch message (the receiver unpacks it), so a burst of small requests
        (e.g. the values one loop iteration sends a task) costs one gRPC message."""
        requests = self._requests
        while True:
            m = requests.get()
            if m is None:
                return
            batch, size = [m], len(m)
            while size < BATCH_BYTES and not requests.empty():
                m = requests.get_nowait()
                if m is None:
                    requests.put(None)  # ends the stream after this batch
                    break
                batch.append(m)
                size += len(m)
            yield batch[0] if len(batch) == 1 else wire.pack({"batch": len(batch)}, batch)

    def request(self, meta: dict, callback, tensors=None) -> bool:
        """Sends a request; `callback(meta, tensors, error)` gets its answer (None: a
        message that has none). False when the stream is broken (nothing sent)."""
        with self._lock:
            if self.broken is not None:
                return False
            if callback is not None:
                self._next_id += 1
                meta["id"] = self._next_id
                self._pending[self._next_id] = callback
        self._requests.put(wire.pack(meta, tensors))
        return True

    def _read(self) -> None:
        error = None
        try:
            for message in self._responses:
                meta, tensors = wire.unpack(message)
                with self._lock:
                    callback = self._pending.pop(meta.get("id"), None)
                if callback is not None:
                    callback(meta, tensors, None)
        except self._grpc.RpcError as e:
            error = rpc_error(self.task, e)
        with self._lock:
            self.broken = error or errors.UnavailableError(
                None, None, "Task %s: the stream of requests ended" % self.task)
            pending, self._pending = self._pending, {}
        for callback in pending.values():
            callback(None, None, self.broken)

    def close(self) -> None:
        self._requests.put(None)
        self._responses.cancel()


class Channels:
    """gRPC channels to the tasks of `cluster`, made on first use."""

    def __init__(self, cluster: ClusterSpec):
        self.cluster = cluster
        self._stubs: Dict[tuple, object] = {}
        self._channels: Dict[str, object] = {}
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._streams: Dict[tuple, _RequestStream] = {}
        self._lock = threading.Lock()
        token = _token()
        self._metadata = ((_TOKEN_KEY, token),) if token else None

    def request(self, task: str, method: str, meta: dict, callback, tensors=None) -> None:
        """Sends `meta` (and `tensors`) on the open request stream `method` to `task`
        (opened on first use, and again after it broke); `callback(meta, tensors,
        error)` gets the answer."""
        stream = self._send(task, method, meta, callback, tensors)
        if stream is not None:
            callback(None, None, stream.broken)

    def notify(self, task: str, method: str, meta: dict, tensors=None) -> bool:
        """Sends a message that gets no answer on the open stream `method` to `task`.
        False when the stream could not take it."""
        return self._send(task, method, meta, None, tensors) is None

    def _send(self, task: str, method: str, meta: dict, callback, tensors):
        """None once sent; else the stream that was broken twice."""
        for _ in range(2):
            with self._lock:
                stream = self._streams.get((task, method))
            if stream is None or stream.broken is not None:
                stream = _RequestStream(self, task, method)
                with self._lock:
                    self._streams[(task, method)] = stream
            if stream.request(meta, callback, tensors):
                return None
        return stream

    def _stub(self, task: str, method: str, kind: str = "unary_unary"):
        key = (task, method)
        stub = self._stubs.get(key)
        if stub is None:
            import grpc
            with self._lock:
                channel = self._channels.get(task)
                if channel is None:
                    job, index = parse_task(task)
                    address = self.cluster.task_address(job, index)
                    creds = channel_credentials()
                    channel = self._channels[task] = grpc.insecure_channel(
                        address, options=_CHANNEL_OPTIONS) if creds is None else \
                        grpc.secure_channel(address, creds, options=_CHANNEL_OPTIONS)
                path = "/%s/%s" % (SERVICE, method)
                stub = self._stubs[key] = getattr(channel, kind)(path)
        return stub

    def stream(self, task: str, method: str, payload: bytes,
               timeout: Optional[float] = None):
        """The messages of the server-streaming `method` on `task`; gRPC failures raise
        TF's error classes."""
        import grpc
        try:
            yield from self._stub(task, method, kind="unary_stream")(
                payload, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise rpc_error(task, e) from None

    def call_async(self, task: str, method: str, payload: bytes,
                   timeout: Optional[float] = None):
        """A future (concurrent.futures) of `method` on `task`: a blocking gRPC call on
        one of the channels' threads. (gRPC's own futures start a thread per call, which
        costs more than the call itself.)"""
        stub = self._stub(task, method)
        return self._calls().submit(stub, payload, timeout=timeout,
                                    metadata=self._metadata)

    def _calls(self) -> concurrent.futures.ThreadPoolExecutor:
        pool = self._pool
        if pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = concurrent.futures.ThreadPoolExecutor(
                        max_workers=64, thread_name_prefix="tw-rpc")
                pool = self._pool
        return pool

    def send_async(self, task: str, method: str, payload: bytes,
                   timeout: Optional[float] = None) -> None:
        """Calls `method` on `task` without waiting for the answer."""
        self.call_async(task, method, payload, timeout)

    def result(self, task: str, future) -> bytes:
        """The response of `future`; gRPC failures raise TF's error classes."""
        import grpc
        try:
            return future.result()
        except (grpc.FutureCancelledError, concurrent.futures.CancelledError):
            raise errors.CancelledError(None, None, "Call to task %s was cancelled"
                                        % task) from None
        except grpc.RpcError as e:
            raise rpc_error(task, e) from None

    def call(self, task: str, method: str, meta: dict, tensors=None,
             timeout: Optional[float] = None):
        """(meta, tensors) of a synchronous call; an error the task sends is raised."""
        out = self.result(task, self.call_async(task, method, wire.pack(meta, tensors),
                                                timeout))
        meta, tensors = wire.unpack(out)
        wire.raise_error(meta, task)
        return meta, tensors

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            stream.close()
        if pool is not None:
            pool.shutdown(wait=False)
        with self._lock:
            for c in self._channels.values():
                c.close()
            self._channels.clear()
            self._stubs.clear()


def rpc_error(task: str, e) -> errors.OpError:
    """TF's error for a failed gRPC call to `task`."""
    import grpc
    code = e.code() if hasattr(e, "code") else None
    detail = e.details() if hasattr(e, "details") else str(e)
    cls = {grpc.StatusCode.UNAVAILABLE: errors.UnavailableError,
           grpc.StatusCode.DEADLINE_EXCEEDED: errors.DeadlineExceededError,
           grpc.StatusCode.CANCELLED: errors.CancelledError,
           grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
           grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
           }.get(code, errors.InternalError)
    return cls(None, None, "Task %s: %s" % (task, detail))


def _check_token(token: Optional[str], context, name: str) -> None:
    """Refuses (UNAUTHENTICATED) and logs a call without the cluster token, if any."""
    if token is not None and dict(context.invocation_metadata()).get(_TOKEN_KEY) != token:
        import grpc
        logger.warning("Refused a %s call from %s: wrong cluster token", name,
                       context.peer())
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "wrong cluster token")


def _handler(worker, method_fn, name: str):
    token = _token()

    def handle(request: bytes, context) -> bytes:
        _check_token(token, context, name)
        meta, tensors = wire.unpack(request)
        try:
            return method_fn(worker, meta, tensors)
        except errors.OpError as e:
            return wire.pack(wire.error_meta(e))
        except Exception as e:  # noqa: BLE001 -- reported to the caller, logged here
            logger.exception("%s failed on %s", name, worker.task)
            return wire.pack(wire.error_meta(e))
    return handle


def _stream_handler(worker, method_fn, name: str):
    token = _token()

    def handle(request: bytes, context):
        import grpc
        _check_token(token, context, name)
        meta, tensors = wire.unpack(request)
        try:
            yield from method_fn(worker, meta, tensors)
        except errors.OpError as e:  # a stream has no message for it: its status does
            context.abort(grpc.StatusCode.ABORTED, e.message)
    return handle


def _bidi_handler(worker, method_fn, name: str):
    """A stream of requests, each answered when ready: `method_fn(worker, meta,
    tensors, reply)` calls `reply(message)` once, from any thread."""
    token = _token()

    def handle(request_iterator, context):
        _check_token(token, context, name)
        answers: "queue.SimpleQueue" = queue.SimpleQueue()

        def read():
            try:
                for request in request_iterator:
                    meta, tensors = wire.unpack(request)
                    batch = [wire.unpack(m) for m in tensors] if "batch" in meta else \
                        [(meta, tensors)]
                    for meta, tensors in batch:
                        try:
                            method_fn(worker, meta, tensors, answers.put)
                        except Exception as e:  # noqa: BLE001 -- answered in the stream
                            answers.put(wire.pack(dict(wire.error_meta(e),
                                                       id=meta.get("id"))))
            except Exception:  # noqa: BLE001 -- the client went away
                pass
            answers.put(None)
        threading.Thread(target=read, name="tw-stream-in", daemon=True).start()
        while True:
            message = answers.get()
            if message is None:
                return
            yield message
    return handle


# Servers still serving (held strongly: a started server serves until stopped, even when
# the program dropped its object, as TF's does). A TF1 program ends by returning from its script while its
# server runs (TF's server is native code that dies with the process). Here the gRPC
# handlers are threads of a ThreadPoolExecutor, which Python joins at exit: a handler of
# a stream another task keeps open would block the exit for good, and two tasks that
# hold streams to each other would each wait for the other. So the servers are stopped
# first, at the start of the interpreter's shutdown (threading's exit hooks run in
# reverse order of registration, before the executors' join).
_LIVE_SERVERS: "set[Server]" = set()
_LIVE_LOCK = threading.Lock()


def _stop_live_servers() -> None:
    with _LIVE_LOCK:
        servers = list(_LIVE_SERVERS)
    for server in servers:
        try:
            server.stop(0)
        except Exception:  # noqa: BLE001 -- exiting: the next server must still stop
            logger.debug("stopping a server at exit failed", exc_info=True)


threading._register_atexit(_stop_live_servers)


def free_port() -> int:
    """A TCP port on 127.0.0.1 free right now."""
    from tensorweave.distribute.launch import free_ports
    return free_ports(1)[0]


@tf_export("train.Server", "distribute.Server")
class Server:
    """An in-process server of one task of a cluster (TF1 `tf.train.Server`).

    Args:
      server_or_cluster_def: a `tf.train.ClusterSpec`, a dict for one, or a ClusterDef.
      job_name: this task's job (may be omitted when the cluster has one job).
      task_index: this task's index in the job (may be omitted when the job has one
        task).
      protocol: "grpc" (the default; the only protocol).
      config: a ConfigProto for the task's devices (device_count, ...).
      start: whether to start serving now.

    Raises:
      ValueError: the job or task cannot be determined, or an unknown protocol.
      UnknownError: the address cannot be bound (a port in use), as TF's.
    """

    def __init__(self, server_or_cluster_def, job_name: Optional[str] = None,
                 task_index: Optional[int] = None, protocol: Optional[str] = None,
                 config=None, start: bool = True):
        import grpc
        from tensorweave.distribute.worker import WorkerService
        if protocol not in (None, "grpc"):
            raise ValueError("Unsupported protocol %r: tensorweave servers speak 'grpc'"
                             % protocol)
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        address = cluster.task_address(job_name, task_index)
        # no SO_REUSEPORT (gRPC's default on Linux): a second server on a port in use
        # must fail, as TF's, not share the port and take half the connections
        self._grpc = grpc.server(concurrent.futures.ThreadPoolExecutor(
            max_workers=64, thread_name_prefix="tw-server"),
            options=_OPTIONS + [("grpc.so_reuseport", 0)])
        creds = server_credentials()
        try:
            port = self._grpc.add_insecure_port(bind_address(address)) if creds is None \
                else self._grpc.add_secure_port(bind_address(address), creds)
        except RuntimeError:  # newer grpcio raises where older ones return 0
            port = 0
        if not port:
            raise errors.UnknownError(None, None, "Could not start gRPC server: cannot "
                                      "bind %s" % address)
        host = address.rpartition(":")[0]
        if address.endswith(":0"):  # a port chosen by the system (create_local_server)
            address = "%s:%d" % (host, port)
            spec = cluster.as_dict()
            tasks = spec[job_name]
            if isinstance(tasks, list):
                tasks[task_index] = address
            else:
                tasks[task_index] = address
            cluster = ClusterSpec(spec)
        self._cluster = cluster
        self._job, self._index = job_name, task_index
        self._address = address
        self._channels = Channels(cluster)
        self._worker = WorkerService(task_name(job_name, task_index), cluster, config,
                                     self._channels)
        handlers = {name: grpc.unary_unary_rpc_method_handler(
            _handler(self._worker, fn, name)) for name, fn in WorkerService.HANDLERS.items()}
        handlers.update({name: grpc.unary_stream_rpc_method_handler(
            _stream_handler(self._worker, fn, name))
            for name, fn in WorkerService.STREAM_HANDLERS.items()})
        handlers.update({name: grpc.stream_stream_rpc_method_handler(
            _bidi_handler(self._worker, fn, name))
            for name, fn in WorkerService.BIDI_HANDLERS.items()})
        self._grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            SERVICE, handlers),))
        self._started = False
        self._stopped = threading.Event()
        if start:
            self.start()

    @property
    def target(self) -> str:
        """The address a Session connects to: "grpc://host:port"."""
        return "grpc://" + self._address

    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    @property
    def worker(self):
        """This task's worker service (its devices and their resources)."""
        return self._worker

    def start(self) -> None:
        """Starts serving (a second call does nothing)."""
        if not self._started:
            self._grpc.start()
            self._started = True
            with _LIVE_LOCK:
                _LIVE_SERVERS.add(self)

    def join(self) -> None:
        """Blocks until the server stops."""
        self._stopped.wait()

    def stop(self, grace: Optional[float] = None) -> None:
        """Stops serving (ours: TF1 servers run until their process ends)."""
        with _LIVE_LOCK:
            _LIVE_SERVERS.discard(self)
        self._grpc.stop(grace).wait()
        self._channels.close()
        self._stopped.set()

    @staticmethod
    def create_local_server(config=None, start: bool = True) -> "Server":
        """A one-task server on 127.0.0.1 and a free port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)


@tf_export("test.create_local_cluster")
def create_local_cluster(num_workers: int, num_ps: int, protocol: str = "grpc",
                         worker_config=None, ps_config=None):
    """Starts a cluster of `num_workers` workers and `num_ps` ps tasks in this process,
    each on 127.0.0.1 and a free port.

    Returns:
      (workers, ps_servers): lists of started `tf.train.Server`s.
    """
    spec = {"worker": ["localhost:%d" % free_port() for _ in range(num_workers)]}
    if num_ps:
        spec["ps"] = ["localhost:%d" % free_port() for _ in range(num_ps)]
    cluster = ClusterSpec(spec)
    workers = [Server(cluster, "worker", i, protocol, worker_config)
               for i in range(num_workers)]
    ps = [Server(cluster, "ps", i, protocol, ps_config) for i in range(num_ps)]
    return workers, ps
