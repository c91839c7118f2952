"""Run a TF1 cluster program as local processes, one per task.

    python -m tensorweave.distribute.launch --ps 2 --workers 4 [--chief] [--evaluator] \\
        [--servers] train.py --steps 100

picks a free port on 127.0.0.1 for every task, builds the cluster
(`{"chief": [...], "worker": [...], "ps": [...]}`), and starts `python train.py --steps
100` once per task with TF_CONFIG naming the cluster and that task, as a scheduler would
(the rest of the environment is passed through unchanged). Each line a task writes is
echoed with the task's name in front ("[worker:1] step 10"), its stdout to stdout and
its stderr to stderr.

The run ends when the chief exits (the "chief" task with --chief, else worker:0; with
--evaluator, when the evaluator has exited too) or when any task exits with a non-zero
status: the launcher then stops every other task it started (SIGTERM, then SIGKILL
after a grace period) and exits with the chief's status, or the first failing task's. A task killed by signal N counts as status 128+N. With
--servers the ps tasks run `tensorweave-server` (they serve until stopped) instead of the
program, for programs whose ps tasks only `server.join()`.

The ports are free when picked and released before the tasks start, so another program
may take one in between; the task that then cannot listen fails and ends the run.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, TextIO

LOCALHOST = "127.0.0.1"
SERVER_MODULE = "tensorweave.distribute.server_main"

# How often the launcher looks at its tasks; how long it waits for a task's last output
# lines once the task has exited.
_POLL_S = 0.05
_DRAIN_S = 2.0
# Status of a run ended by its time limit, as timeout(1) reports it.
TIMEOUT_STATUS = 124


@dataclasses.dataclass(frozen=True)
class _Task:
    job: str
    index: int

    def __str__(self) -> str:
        return "%s:%d" % (self.job, self.index)


class _Running(NamedTuple):
    task: _Task
    process: subprocess.Popen
    pumps: List[threading.Thread]


def free_ports(count: int, host: str = LOCALHOST) -> List[int]:
    """`count` distinct TCP ports that are free on `host` now.

    Each is found by binding port 0 and reading the port the system gave; the sockets are
    all held until every port is picked (so the ports differ), then closed.
    """
    sockets: List[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _tasks(num_ps: int, num_workers: int, chief: bool) -> List[_Task]:
    for name, value in (("num_ps", num_ps), ("num_workers", num_workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("%s must be a non-negative integer, got %r" % (name, value))
    if not chief and num_workers == 0:
        raise ValueError("the cluster needs a chief: at least one worker (worker:0 is "
                         "the chief) or chief=True")
    tasks = [_Task("chief", 0)] if chief else []
    tasks += [_Task("worker", i) for i in range(num_workers)]
    tasks += [_Task("ps", i) for i in range(num_ps)]
    return tasks


def cluster_spec_dict(num_ps: int, num_workers: int, chief: bool = False,
                      host: str = LOCALHOST) -> Dict[str, List[str]]:
    """A cluster of `chief` (one task, if asked), `num_workers` workers and `num_ps`
    parameter servers on `host`, each task on its own free port, as the dict
    `tf.train.ClusterSpec` takes (jobs without tasks are left out).

    Raises:
      ValueError: a negative count, or no chief (neither `chief` nor a worker).
    """
    return _cluster(_tasks(num_ps, num_workers, chief), host)


def _cluster(tasks: Sequence[_Task], host: str) -> Dict[str, List[str]]:
    cluster: Dict[str, List[str]] = {}
    for task, port in zip(tasks, free_ports(len(tasks), host)):
        cluster.setdefault(task.job, []).append("%s:%d" % (host, port))
    return cluster


def _status(returncode: int) -> int:
    """A process's exit status as a shell reports it: 128+N when killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


class _Output:
    """The launcher's and the tasks' lines, written whole under one lock."""

    def __init__(self, stdout: TextIO, stderr: TextIO):
        self._streams = {"stdout": stdout, "stderr": stderr}
        self._lock = threading.Lock()

    def line(self, which: str, prefix: str, text: str) -> None:
        with self._lock:
            stream = self._streams[which]
            try:
                stream.write("%s%s\n" % (prefix, text))
                stream.flush()
            except (OSError, ValueError):
                pass  # the launcher's own output is gone (closed pipe): keep running

    def note(self, text: str) -> None:
        self.line("stderr", "[launch] ", text)

    def pump(self, pipe, which: str, prefix: str) -> None:
        """Echoes `pipe` line by line until it closes (thread body)."""
        with pipe:
            for raw in iter(pipe.readline, b""):
                self.line(which, prefix, raw.decode("utf-8", "replace").rstrip("\r\n"))


def _start(task: _Task, argv: List[str], env: Dict[str, str], output: _Output) -> _Running:
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    pumps = []
    for pipe, which in ((process.stdout, "stdout"), (process.stderr, "stderr")):
        t = threading.Thread(target=output.pump, args=(pipe, which, "[%s] " % task),
                             name="launch-%s-%s" % (task, which), daemon=True)
        t.start()
        pumps.append(t)
    return _Running(task, process, pumps)


def _join_all(threads: Sequence[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


def _stop(running: Sequence[_Running], grace_period: float, output: _Output) -> None:
    """SIGTERM to every task still running, SIGKILL to those still running
    `grace_period` seconds later; returns once they are reaped (or after another
    `grace_period` for any that could not be)."""
    alive = [r for r in running if r.process.poll() is None]
    for r in alive:
        r.process.terminate()  # a no-op for a process that has exited since
    deadline = time.monotonic() + grace_period
    for r in alive:
        try:
            r.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for r in alive:
        if r.process.poll() is None:
            output.note("%s (pid %d) still running %g s after SIGTERM; sending SIGKILL"
                        % (r.task, r.process.pid, grace_period))
            r.process.kill()
    for r in alive:
        try:
            r.process.wait(grace_period)
        except subprocess.TimeoutExpired:
            output.note("%s (pid %d) did not exit after SIGKILL" % (r.task, r.process.pid))


def _supervise(running: Sequence[_Running], awaited: Sequence[_Task],
               timeout: Optional[float], stop_event: Optional[threading.Event],
               output: _Output) -> int:
    """Waits until the chief (`awaited[0]`) and the other `awaited` tasks have exited, a
    task fails, the time is up or `stop_event` is set; returns the launcher's status."""
    chief = awaited[0]
    deadline = None if timeout is None else time.monotonic() + timeout
    exited = set()
    done = set()  # awaited tasks that exited with status 0
    while True:
        if stop_event is not None and stop_event.is_set():
            output.note("asked to stop; stopping all tasks")
            return 128 + signal.SIGTERM
        for r in running:
            if r.task in exited or r.process.poll() is None:
                continue
            exited.add(r.task)
            status = _status(r.process.returncode)
            what = "the chief %s" % r.task if r.task == chief else str(r.task)
            if status == 0:
                if r.task not in awaited:
                    continue
                done.add(r.task)
                waiting = [str(t) for t in awaited if t not in done]
                if waiting:
                    output.note("%s exited with status 0; waiting for %s"
                                % (what, ", ".join(waiting)))
                    continue
            _join_all(r.pumps, _DRAIN_S)  # its last lines before the launcher's note
            output.note("%s exited with status %d; stopping the other tasks"
                        % (what, status))
            return status
        if deadline is not None and time.monotonic() >= deadline:
            output.note("time limit of %g s reached; stopping all tasks" % timeout)
            return TIMEOUT_STATUS
        time.sleep(_POLL_S)


def launch(script_argv: Sequence[str], num_ps: int, num_workers: int, chief: bool = False,
           ps_servers: bool = False, env: Optional[Mapping[str, str]] = None,
           timeout: Optional[float] = None, grace_period: float = 5.0,
           stop_event: Optional[threading.Event] = None, evaluator: bool = False) -> int:
    """Runs `python *script_argv` once per task of a local cluster; see the module doc.

    Args:
      script_argv: the Python command line after the interpreter: a script and its
        arguments (or "-m", a module and its arguments).
      num_ps: the number of "ps" tasks.
      num_workers: the number of "worker" tasks.
      chief: whether the cluster has a "chief" task (the chief); else worker:0 is it.
      ps_servers: run `tensorweave-server` in the ps tasks instead of the script.
      env: the tasks' environment (default: this process's); TF_CONFIG is set in it per
        task, and PYTHONUNBUFFERED=1 unless it says otherwise, so lines come as printed.
      timeout: seconds after which every task is stopped and 124 returned (None: none).
      grace_period: seconds a task has to exit after SIGTERM before it gets SIGKILL.
      stop_event: when set (from another thread), every task is stopped and 143
        returned.
      evaluator: also run an "evaluator" task (tf.estimator's: outside the cluster,
        TF_CONFIG names only its task); the run then ends when both the chief and the
        evaluator have exited (the evaluator of train_and_evaluate exits after it has
        evaluated the final checkpoint).

    Returns:
      The chief's exit status, or that of the first task that failed (128+N for a task
      killed by signal N), 124 on timeout, 143 when stopped by `stop_event`.

    Raises:
      ValueError: no script, a negative count, or no chief.
    """
    script_argv = [str(a) for a in script_argv]
    if not script_argv:
        raise ValueError("no program to run: script_argv is empty")
    tasks = _tasks(num_ps, num_workers, chief)
    cluster = _cluster(tasks, LOCALHOST)
    awaited = [tasks[0]]
    if evaluator:
        awaited.append(_Task("evaluator", 0))
        tasks.append(awaited[-1])
    output = _Output(sys.stdout, sys.stderr)
    base_env = dict(os.environ if env is None else env)
    base_env.setdefault("PYTHONUNBUFFERED", "1")

    running: List[_Running] = []
    try:
        for task in tasks:
            if ps_servers and task.job == "ps":
                argv = [sys.executable, "-m", SERVER_MODULE]
            else:
                argv = [sys.executable] + script_argv
            tf_config = {"cluster": cluster,
                         "task": {"type": task.job, "index": task.index}}
            running.append(_start(task, argv, dict(base_env, TF_CONFIG=json.dumps(tf_config)),
                                  output))
        return _supervise(running, awaited, timeout, stop_event, output)
    finally:
        _stop(running, grace_period, output)
        _join_all([t for r in running for t in r.pumps], _DRAIN_S)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tensorweave.distribute.launch",
        description="Run a TF1 cluster program as local processes, one per task, each "
                    "with TF_CONFIG naming the cluster (free ports on 127.0.0.1) and its "
                    "task.")
    p.add_argument("--ps", type=int, default=0, metavar="N",
                   help="parameter-server tasks (default 0)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker tasks (default 1)")
    p.add_argument("--chief", action="store_true",
                   help='add a "chief" task, the chief (else worker:0 is)')
    p.add_argument("--evaluator", action="store_true",
                   help='add an "evaluator" task (tf.estimator\'s, outside the cluster); '
                        "the run then also waits for it to exit")
    p.add_argument("--servers", action="store_true",
                   help="the ps tasks run tensorweave-server instead of the program")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop every task after S seconds and exit 124")
    p.add_argument("--grace", type=float, default=5.0, metavar="S",
                   help="seconds between SIGTERM and SIGKILL when stopping tasks "
                        "(default 5)")
    p.add_argument("script_argv", nargs=argparse.REMAINDER, metavar="script.py args",
                   help="the program and its arguments (after `--`, any Python "
                        "command line: `-- -m package.module args`)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The launcher's command line. Returns its exit status (2 for bad options)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse has printed the usage and the error (or --help)
        return e.code if isinstance(e.code, int) else 2
    if args.script_argv[:1] == ["--"]:
        del args.script_argv[0]
    if not args.script_argv:
        parser.print_usage(sys.stderr)
        print("%s: error: no program to run" % parser.prog, file=sys.stderr)
        return 2

    stop_event = threading.Event()
    received: List[int] = []

    def on_signal(signum, _frame) -> None:
        received.append(signum)
        stop_event.set()

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    try:
        status = launch(args.script_argv, args.ps, args.workers, chief=args.chief,
                        ps_servers=args.servers, timeout=args.timeout,
                        grace_period=args.grace, stop_event=stop_event,
                        evaluator=args.evaluator)
        return 128 + received[0] if received else status
    except ValueError as e:
        print("%s: error: %s" % (parser.prog, e), file=sys.stderr)
        return 2
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
