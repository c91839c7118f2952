"""`tensorweave-server`: run one task of a cluster as a server until told to stop.

The parameter-server tasks of a TF1 program often do nothing but serve: build
`tf.train.Server(cluster, job_name="ps", task_index=i)` and `server.join()`. This command
is that program, for schedulers and for `python -m tensorweave.distribute.launch
--servers`:

    tensorweave-server --cluster '{"ps": ["h0:2222"], "worker": ["h1:2222"]}' \\
        --job ps --task 0
    TF_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' tensorweave-server

The task's address (and so the port it listens on) is the one the cluster spec gives it.
The server runs until SIGTERM or SIGINT, then stops and the command exits 0. A cluster,
job or task that cannot be resolved is an error: one line on stderr, exit status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Mapping, NamedTuple, Optional, Sequence

from tensorweave.distribute.cluster import ClusterSpec

PROG = "tensorweave-server"

# How often the waiting main thread wakes up (it waits on an Event; signal handlers run
# between those waits) and how long a stopping server may take before we give up on it.
_POLL_S = 0.2
_STOP_TIMEOUT_S = 10.0


class ServerTask(NamedTuple):
    """Which task of which cluster this process serves."""
    cluster: ClusterSpec
    job_name: str
    task_index: int


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Run one task of a tensorweave cluster as a gRPC server until "
                    "SIGTERM/SIGINT. The cluster and task come from the options, else "
                    "from the TF_CONFIG environment variable.")
    p.add_argument("--cluster", metavar="JSON", default=None,
                   help='the cluster as JSON: {"job": ["host:port", ...], ...} '
                        "(default: TF_CONFIG's \"cluster\")")
    p.add_argument("--job", metavar="NAME", default=None,
                   help="this task's job (default: TF_CONFIG's task type, or the "
                        "cluster's only job)")
    p.add_argument("--task", metavar="N", type=int, default=None,
                   help="this task's index in its job (default: TF_CONFIG's task index, "
                        "or the job's only task)")
    return p


def _tf_config(environ: Mapping[str, str]) -> dict:
    from tensorweave.distribute.cluster import read_tf_config
    config = read_tf_config(environ)
    task = config.get("task", {})
    if not isinstance(task, dict):
        raise ValueError("TF_CONFIG's \"task\" must be a JSON object, got %r" % (task,))
    return config


def _cluster(raw: object, source: str) -> ClusterSpec:
    if not isinstance(raw, dict):
        raise ValueError("%s must be a JSON object mapping job names to lists of "
                         "\"host:port\" addresses, got %r" % (source, raw))
    try:
        cluster = ClusterSpec(raw)
    except (TypeError, ValueError) as e:
        raise ValueError("%s is not a valid cluster: %s" % (source, e)) from None
    if not cluster:
        raise ValueError("%s has no jobs" % source)
    return cluster


def resolve_task(args: argparse.Namespace, environ: Mapping[str, str]) -> ServerTask:
    """The cluster, job and task index this server is for.

    `args` carries `cluster` (JSON text or None), `job` and `task` (None where not
    given); `environ` is the environment to read TF_CONFIG from. The options win over
    TF_CONFIG; without either, a cluster with one job names the job and a job with one
    task names the task, as `tf.train.Server` does.

    Returns:
      A `ServerTask(cluster, job_name, task_index)`.

    Raises:
      ValueError: no cluster, invalid JSON, an unknown job, a task the job does not have,
        or a job/task that is ambiguous; the message says which.
    """
    config = _tf_config(environ)
    if args.cluster is not None:
        try:
            raw = json.loads(args.cluster)
        except ValueError as e:
            raise ValueError("--cluster is not valid JSON: %s" % e) from None
        cluster = _cluster(raw, "--cluster")
    elif config.get("cluster"):
        cluster = _cluster(config["cluster"], "TF_CONFIG's \"cluster\"")
    else:
        raise ValueError("no cluster: pass --cluster JSON or set TF_CONFIG with a "
                         "\"cluster\"")

    task = config.get("task", {})
    job = args.job if args.job is not None else task.get("type")
    if job is None:
        if len(cluster.jobs) != 1:
            raise ValueError("no job: pass --job (one of %s) or set TF_CONFIG's task type"
                             % ", ".join(cluster.jobs))
        job = cluster.jobs[0]
    job = str(job)
    if job not in cluster.jobs:
        raise ValueError("unknown job %r: the cluster has jobs %s"
                         % (job, ", ".join(cluster.jobs)))

    indices = cluster.task_indices(job)
    index = args.task
    if index is None and (args.job is None or args.job == task.get("type")):
        # TF_CONFIG's index belongs to TF_CONFIG's task type, not to another job named
        # on the command line.
        index = task.get("index")
    if index is None:
        if len(indices) != 1:
            raise ValueError("no task index: pass --task (job %r has tasks %s) or set "
                             "TF_CONFIG's task index" % (job, _ranges(indices)))
        index = indices[0]
    try:
        index = int(index)
    except (TypeError, ValueError):
        raise ValueError("the task index must be an integer, got %r" % (index,)) from None
    if index not in indices:
        raise ValueError("task %d out of range: job %r has tasks %s"
                         % (index, job, _ranges(indices)))
    return ServerTask(cluster, job, index)


def _ranges(indices: Sequence[int]) -> str:
    if list(indices) == list(range(len(indices))):
        return "0..%d" % (len(indices) - 1)
    return ", ".join(str(i) for i in indices)


def _error(message: str) -> None:
    print("%s: error: %s" % (PROG, message), file=sys.stderr, flush=True)


def _serve(task: ServerTask) -> int:
    """Starts the server, waits for SIGTERM/SIGINT (or the server stopping on its own),
    stops it. Returns the exit status."""
    try:
        from tensorweave.distribute.server import Server
    except ImportError as e:
        _error("the gRPC server is not available: %s" % e)
        return 1

    name = "/job:%s/task:%d" % (task.job_name, task.task_index)
    try:
        server = Server(task.cluster, job_name=task.job_name, task_index=task.task_index,
                        protocol="grpc", start=True)
    except Exception as e:  # noqa: BLE001 - one line for any start failure, then exit 1
        _error("could not start the server for %s at %s: %s"
               % (name, task.cluster.task_address(task.job_name, task.task_index), e))
        return 1

    stop_requested = threading.Event()
    # join() blocks (in a daemon thread, so the main thread stays free to take signals)
    # until the server stops.
    def join() -> None:
        try:
            server.join()
        finally:
            stop_requested.set()

    joiner = threading.Thread(target=join, name="tensorweave-server-join", daemon=True)
    joiner.start()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda *_: stop_requested.set())
    try:
        print("%s: %s serving at %s" % (PROG, name, server.target), file=sys.stderr,
              flush=True)
        while not stop_requested.wait(_POLL_S):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()
        joiner.join(_STOP_TIMEOUT_S)
    if joiner.is_alive():
        _error("%s did not stop within %g s" % (name, _STOP_TIMEOUT_S))
        return 1
    print("%s: %s stopped" % (PROG, name), file=sys.stderr, flush=True)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The `tensorweave-server` command. Returns the exit status: 0 after a clean stop,
    2 for bad options or an unresolvable cluster/job/task, 1 if the server fails."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse has printed the usage and the error (or --help)
        return e.code if isinstance(e.code, int) else 2
    try:
        task = resolve_task(args, os.environ)
    except ValueError as e:
        _error(str(e))
        return 2
    return _serve(task)


if __name__ == "__main__":
    sys.exit(main())
