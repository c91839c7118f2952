"""`tensorweave-server` (issue 15): resolving the task from --cluster/--job/--task or
TF_CONFIG, the error lines and exit status 2, serving until SIGTERM (against a stand-in
Server, and against the real gRPC server when it exists)."""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import types

import pytest

import tensorweave as tf
from tensorweave.distribute.server_main import ServerTask, main, resolve_task

CLUSTER = {"ps": ["p0:2222", "p1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}


def _args(cluster=None, job=None, task=None):
    return argparse.Namespace(cluster=None if cluster is None else json.dumps(cluster),
                              job=job, task=task)


def _tf_config(cluster, job=None, index=None):
    config = {"cluster": cluster}
    if job is not None:
        config["task"] = {"type": job, "index": index}
    return {"TF_CONFIG": json.dumps(config)}


def test_resolve_from_options():
    got = resolve_task(_args(CLUSTER, "worker", 2), {})
    assert type(got) is ServerTask
    assert got == (tf.train.ClusterSpec(CLUSTER), "worker", 2)
    assert got.cluster.task_address(got.job_name, got.task_index) == "w2:2222"


def test_resolve_from_tf_config():
    got = resolve_task(_args(), _tf_config(CLUSTER, "ps", 1))
    assert got == (tf.train.ClusterSpec(CLUSTER), "ps", 1)


def test_options_win_over_tf_config():
    env = _tf_config({"ps": ["x:1"], "worker": ["y:1", "z:1"]}, "worker", 1)
    # the cluster from --cluster, the task from TF_CONFIG
    assert resolve_task(_args(CLUSTER), env) == (tf.train.ClusterSpec(CLUSTER), "worker", 1)
    # --task replaces TF_CONFIG's index
    assert resolve_task(_args(task=0), env).task_index == 0
    # --job naming TF_CONFIG's own type keeps its index
    assert resolve_task(_args(job="worker"), env).task_index == 1
    # --job naming another job does not take TF_CONFIG's index: its only task is it
    assert resolve_task(_args(job="ps"), env)[1:] == ("ps", 0)


def test_single_job_and_task_are_the_defaults():
    got = resolve_task(_args({"ps": ["h:1"]}), {})
    assert got[1:] == ("ps", 0)
    # a job given only by sparse indices: its one task, whatever its index
    got = resolve_task(_args({"worker": {"3": "h:3"}}, "worker"), {})
    assert got[1:] == ("worker", 3)


@pytest.mark.parametrize("argv,env,fragment", [
    ([], {}, 'no cluster: pass --cluster JSON or set TF_CONFIG with a "cluster"'),
    ([], {"TF_CONFIG": json.dumps({"task": {"type": "ps", "index": 0}})},
     "no cluster"),
    (["--cluster", json.dumps(CLUSTER), "--job", "chief"], {},
     "unknown job 'chief': the cluster has jobs ps, worker"),
    (["--cluster", json.dumps(CLUSTER), "--job", "worker", "--task", "3"], {},
     "task 3 out of range: job 'worker' has tasks 0..2"),
    (["--cluster", json.dumps(CLUSTER), "--job", "ps", "--task", "-1"], {},
     "task -1 out of range: job 'ps' has tasks 0..1"),
    (["--cluster", json.dumps(CLUSTER), "--task", "0"], {},
     "no job: pass --job (one of ps, worker)"),
    (["--cluster", json.dumps(CLUSTER), "--job", "ps"], {},
     "no task index: pass --task (job 'ps' has tasks 0..1)"),
    (["--cluster", "{'ps': 1"], {}, "--cluster is not valid JSON"),
    (["--cluster", "[1, 2]"], {}, "--cluster must be a JSON object"),
    (["--cluster", "{}"], {}, "--cluster has no jobs"),
    (["--cluster", json.dumps({"ps": [1]})], {}, "--cluster is not a valid cluster: "
     "The address of a task of job 'ps' must be a string"),
    ([], {"TF_CONFIG": "{not json"}, "TF_CONFIG is not valid JSON"),
    ([], {"TF_CONFIG": json.dumps({"cluster": CLUSTER, "task": {"type": "ps",
                                                                "index": 5}})},
     "task 5 out of range: job 'ps' has tasks 0..1"),
    ([], {"TF_CONFIG": json.dumps({"cluster": CLUSTER, "task": {"type": "evaluator",
                                                                "index": 0}})},
     "unknown job 'evaluator'"),
])
def test_errors_are_one_line_and_status_2(monkeypatch, capsys, argv, env, fragment):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tensorweave-server: error: ")
    assert fragment in lines[0]


def test_bad_option_is_status_2(capsys):
    assert main(["--task", "one"]) == 2
    assert "invalid int value: 'one'" in capsys.readouterr().err
    assert main(["--host", "h:1"]) == 2  # the address comes from the cluster
    assert "unrecognized arguments: --host" in capsys.readouterr().err


# --- serving, against a stand-in Server ---------------------------------------------

class _FakeServer:
    """Records how server_main drives a Server: join() blocks until stop()."""
    instances = []
    fail_with = None

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None,
                 protocol=None, config=None, start=True):
        if _FakeServer.fail_with is not None:
            raise _FakeServer.fail_with
        self.args = (server_or_cluster_def, job_name, task_index, protocol, start)
        self.stopped = threading.Event()
        self.stop_calls = 0
        _FakeServer.instances.append(self)

    @property
    def target(self):
        return "grpc://fake:1"

    def join(self):
        self.stopped.wait(30)

    def stop(self):
        self.stop_calls += 1
        self.stopped.set()


@pytest.fixture
def fake_server(monkeypatch):
    module = types.ModuleType("tensorweave.distribute.server")
    module.Server = _FakeServer
    monkeypatch.setitem(sys.modules, "tensorweave.distribute.server", module)
    monkeypatch.setattr(_FakeServer, "instances", [])
    monkeypatch.setattr(_FakeServer, "fail_with", None)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    return _FakeServer


ONE_TASK = ["--cluster", json.dumps({"ps": ["127.0.0.1:2222"]})]


@pytest.mark.timeout(60)
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers can only be installed in the main thread")
def test_serves_until_sigterm_then_stops(fake_server, capsys):
    before = signal.getsignal(signal.SIGTERM)
    sent = []

    def send_sigterm_once_handled():
        # wait (bounded) for main() to install its handler, then signal this process
        for _ in range(1000):
            if signal.getsignal(signal.SIGTERM) is not before:
                sent.append(True)
                os.kill(os.getpid(), signal.SIGTERM)
                return
            threading.Event().wait(0.01)
        for server in fake_server.instances:  # never installed: end the test anyway
            server.stopped.set()

    killer = threading.Thread(target=send_sigterm_once_handled, daemon=True)
    killer.start()
    assert main(ONE_TASK) == 0
    killer.join(10)
    assert sent == [True]
    [server] = fake_server.instances
    assert server.args == (tf.train.ClusterSpec({"ps": ["127.0.0.1:2222"]}), "ps", 0,
                           "grpc", True)
    assert server.stop_calls == 1
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    err = capsys.readouterr().err
    assert "tensorweave-server: /job:ps/task:0 serving at grpc://fake:1" in err
    assert "tensorweave-server: /job:ps/task:0 stopped" in err


@pytest.mark.timeout(60)
def test_a_server_that_stops_by_itself_ends_the_command(fake_server, monkeypatch):
    monkeypatch.setattr(_FakeServer, "join", lambda self: None)
    assert main(ONE_TASK) == 0
    assert fake_server.instances[0].stop_calls == 1


def test_a_server_that_cannot_start_is_status_1(fake_server, capsys):
    fake_server.fail_with = OSError("address in use")
    assert main(ONE_TASK) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["tensorweave-server: error: could not start the server for "
                   "/job:ps/task:0 at 127.0.0.1:2222: address in use"]


# --- the real gRPC server -------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(60)
def test_real_server_serves_and_stops_on_sigterm():
    pytest.importorskip("tensorweave.distribute.server",
                        reason="tensorweave.distribute.server (the gRPC Server) is not "
                               "written yet")
    grpc = pytest.importorskip("grpc")
    address = "127.0.0.1:%d" % _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.distribute.server_main",
         "--cluster", json.dumps({"worker": [address]}), "--job", "worker", "--task", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        channel = grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(channel).result(timeout=10)
        finally:
            channel.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err.decode()
        assert b"/job:worker/task:0 stopped" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
