"""The local cluster launcher (issue 15): one real process per task on 127.0.0.1 with
TF_CONFIG, prefixed output, the chief/failure rules, SIGTERM then SIGKILL, by pid."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading

import pytest

import tensorweave as tf
from tensorweave.distribute import launch as launch_module
from tensorweave.distribute.launch import cluster_spec_dict, free_ports, launch, main

# Every task runs this. It reads TF_CONFIG, prints what it got, then acts by its task:
# the first argument is a directory for marker files, the rest "task=action" pairs.
#   exit:N      exit with status N (after writing its marker)
#   sleep       write its pid to <dir>/<task>.pid, sleep 60 s
#   ignore      the same, ignoring SIGTERM
#   wait:T,...  wait (bounded) for the markers of tasks T,... then exit 0
#   wait_exit:T:N  wait for T's pid file, then exit N
#   kill9       kill itself with SIGKILL
# A task without a pair does exit:0.
TASK_SCRIPT = textwrap.dedent("""\
    import json, os, signal, sys, time
    config = json.loads(os.environ["TF_CONFIG"])
    me = "%s:%d" % (config["task"]["type"], config["task"]["index"])
    markers = sys.argv[1]
    actions = dict(a.split("=", 1) for a in sys.argv[2:])
    print("task", me, "argv", sys.argv[2:])
    print("cluster", json.dumps(config["cluster"], sort_keys=True))
    print("env", os.environ.get("TW_DISABLE_GPU"), os.environ.get("LAUNCH_TEST_VAR"))
    print("to stderr from", me, file=sys.stderr)

    def mark(name, text=""):
        with open(os.path.join(markers, name + ".tmp"), "w") as f:
            f.write(text)
        os.replace(os.path.join(markers, name + ".tmp"), os.path.join(markers, name))

    def wait_for(name):
        for _ in range(2000):  # 20 s at most
            if os.path.exists(os.path.join(markers, name)):
                return
            time.sleep(0.01)
        sys.exit(99)

    action = actions.get(me, "exit:0")
    kind, _, arg = action.partition(":")
    if kind in ("sleep", "ignore"):
        if kind == "ignore":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        mark(me + ".pid", str(os.getpid()))
        time.sleep(60)
        sys.exit(0)
    if kind == "wait":
        for other in arg.split(","):
            wait_for(other + ".done")
        print(me, "saw", arg)
        sys.exit(0)
    if kind == "wait_exit":
        other, _, status = arg.rpartition(":")
        wait_for(other + ".pid")
        sys.exit(int(status))
    if kind == "kill9":
        os.kill(os.getpid(), signal.SIGKILL)
    mark(me + ".done")
    sys.exit(int(arg))
    """)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "task.py"
    path.write_text(TASK_SCRIPT)
    markers = tmp_path / "markers"
    markers.mkdir()
    return [str(path), str(markers)], markers


def _pid(markers, task):
    return int((markers / (task + ".pid")).read_text())


def _assert_gone(pid):
    try:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)  # do not leave it behind when the test fails
        raise


def _ports(cluster):
    addresses = [a for tasks in cluster.values() for a in tasks]
    hosts = {a.rsplit(":", 1)[0] for a in addresses}
    assert hosts == {"127.0.0.1"}
    return [int(a.rsplit(":", 1)[1]) for a in addresses]


def test_free_ports_are_distinct_and_bindable():
    ports = free_ports(6)
    assert len(set(ports)) == 6 and all(isinstance(p, int) and p > 0 for p in ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_cluster_spec_dict():
    cluster = cluster_spec_dict(num_ps=2, num_workers=3, chief=True)
    assert list(cluster) == ["chief", "worker", "ps"]
    assert [len(cluster[j]) for j in cluster] == [1, 3, 2]
    assert len(set(_ports(cluster))) == 6
    assert tf.train.ClusterSpec(cluster).num_tasks("worker") == 3
    assert list(cluster_spec_dict(0, 1)) == ["worker"]  # jobs without tasks left out


@pytest.mark.timeout(120)
def test_every_task_runs_with_its_tf_config(script):
    argv, markers = script
    env = dict(os.environ, TW_DISABLE_GPU="1", LAUNCH_TEST_VAR="passed")
    # the chief waits for every other task's marker: the run must not end when worker:0
    # (not the chief here) exits
    proc = subprocess.run(
        [sys.executable, "-m", "tensorweave.distribute.launch", "--ps", "1",
         "--workers", "2", "--chief", "--timeout", "60"]
        + argv + ["chief:0=wait:worker:0,worker:1,ps:0", "--flag=x"],
        env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    tasks = ["chief:0", "worker:0", "worker:1", "ps:0"]
    clusters = []
    for task in tasks:
        mine = [line for line in out if line.startswith("[%s] " % task)]
        assert mine[0] == ("[%s] task %s argv ['chief:0=wait:worker:0,worker:1,ps:0', "
                           "'--flag=x']" % (task, task))
        assert mine[2] == "[%s] env 1 passed" % task
        clusters.append(json.loads(mine[1][len("[%s] cluster " % task):]))
        assert "[%s] to stderr from %s" % (task, task) in proc.stderr.splitlines()
    assert "[chief:0] chief:0 saw worker:0,worker:1,ps:0" in out
    # every line is some task's
    assert all(re.match(r"\[(chief|worker|ps):\d\] ", line) for line in out)
    assert all(c == clusters[0] for c in clusters)
    assert sorted(clusters[0]) == ["chief", "ps", "worker"]
    assert [len(clusters[0][j]) for j in ("chief", "worker", "ps")] == [1, 2, 1]
    assert len(set(_ports(clusters[0]))) == 4
    assert "[launch] the chief chief:0 exited with status 0" in proc.stderr


@pytest.mark.timeout(60)
def test_a_failing_task_stops_the_others(script, capsys):
    argv, markers = script
    # worker:1 exits 3 once ps:0 sleeps; the chief worker:0 sleeps too
    status = launch(argv + ["ps:0=sleep", "worker:0=sleep", "worker:1=wait_exit:ps:0:3"],
                    num_ps=1, num_workers=2, timeout=30, grace_period=5)
    assert status == 3  # not 124: stopped before the time limit
    _assert_gone(_pid(markers, "ps:0"))
    _assert_gone(_pid(markers, "worker:0"))
    err = capsys.readouterr().err
    assert "[launch] worker:1 exited with status 3; stopping the other tasks" in err


@pytest.mark.timeout(60)
def test_a_task_ignoring_sigterm_gets_sigkill(script, capsys):
    argv, markers = script
    status = launch(argv + ["ps:0=ignore", "worker:0=wait_exit:ps:0:0"], num_ps=1,
                    num_workers=1, timeout=30, grace_period=0.5)
    assert status == 0
    _assert_gone(_pid(markers, "ps:0"))
    assert re.search(r"\[launch\] ps:0 \(pid \d+\) still running 0.5 s after SIGTERM; "
                     "sending SIGKILL", capsys.readouterr().err)


@pytest.mark.timeout(60)
def test_status_of_a_task_killed_by_a_signal(script, capsys):
    argv, markers = script
    assert launch(argv + ["worker:0=kill9"], num_ps=0, num_workers=1, timeout=30) == 137
    assert "the chief worker:0 exited with status 137" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_time_limit_and_stop_event(script, capsys):
    argv, markers = script
    assert launch(argv + ["worker:0=sleep"], 0, 1, timeout=0.5) == 124
    _assert_gone(_pid(markers, "worker:0"))
    assert "[launch] time limit of 0.5 s reached" in capsys.readouterr().err

    (markers / "worker:0.pid").unlink()
    stop = threading.Event()

    def stop_once_sleeping():
        for _ in range(2000):
            if (markers / "worker:0.pid").exists():
                break
            threading.Event().wait(0.01)
        stop.set()

    threading.Thread(target=stop_once_sleeping, daemon=True).start()
    assert launch(argv + ["worker:0=sleep"], 0, 1, timeout=30, stop_event=stop) == 143
    _assert_gone(_pid(markers, "worker:0"))
    assert "[launch] asked to stop" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_servers_run_the_server_module_in_ps_tasks(script, tmp_path, monkeypatch, capsys):
    argv, markers = script
    # a stand-in for tensorweave-server: says which task it is, then serves (sleeps)
    (tmp_path / "fake_server.py").write_text(textwrap.dedent("""\
        import json, os, sys, time
        task = json.loads(os.environ["TF_CONFIG"])["task"]
        print("fake server", task["type"], task["index"], sys.argv[1:])
        with open(os.path.join(%r, "ps:%%d.done" %% task["index"]), "w"):
            pass
        time.sleep(60)
        """ % str(markers)))
    monkeypatch.setattr(launch_module, "SERVER_MODULE", "fake_server")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    status = launch(argv + ["worker:0=wait:ps:0,ps:1"], num_ps=2, num_workers=1,
                    ps_servers=True, env=env, timeout=30)
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    assert "[ps:0] fake server ps 0 []" in out and "[ps:1] fake server ps 1 []" in out
    assert "[worker:0] worker:0 saw ps:0,ps:1" in out
    assert not any(line.startswith("[ps:0] task") for line in out)


@pytest.mark.parametrize("argv,fragment", [
    ([], "no program to run"),
    (["--"], "no program to run"),
    (["--workers", "0", "x.py"], "the cluster needs a chief"),
    (["--ps", "-1", "x.py"], "num_ps must be a non-negative integer, got -1"),
    (["--workers", "two", "x.py"], "invalid int value: 'two'"),
])
def test_bad_command_lines_are_status_2(capsys, argv, fragment):
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_api_argument_errors():
    with pytest.raises(ValueError, match="script_argv is empty"):
        launch([], 0, 1)
    with pytest.raises(ValueError, match="num_workers must be a non-negative integer"):
        launch(["x.py"], 0, 1.5)
    with pytest.raises(ValueError, match="the cluster needs a chief"):
        launch(["x.py"], 2, 0)


def _wait_for_file(path, seconds=20.0):
    for _ in range(int(seconds * 100)):
        if path.exists():
            return
        threading.Event().wait(0.01)
    raise AssertionError("%s never appeared" % path)


@pytest.mark.timeout(60)
def test_sigterm_to_the_launcher_stops_its_tasks(script):
    argv, markers = script
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorweave.distribute.launch", "--ps", "1", "--timeout",
         "30"] + argv + ["ps:0=sleep", "worker:0=sleep"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_file(markers / "ps:0.pid")
        _wait_for_file(markers / "worker:0.pid")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "[launch] asked to stop; stopping all tasks" in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    # the tasks were the launcher's children: reaped by it, so gone
    _assert_gone(_pid(markers, "ps:0"))
    _assert_gone(_pid(markers, "worker:0"))


@pytest.mark.timeout(60)
def test_servers_with_the_real_grpc_server(tmp_path, capsys):
    pytest.importorskip("tensorweave.distribute.server",
                        reason="tensorweave.distribute.server (the gRPC Server) is not "
                               "written yet")
    pytest.importorskip("grpc")
    worker = tmp_path / "worker.py"
    worker.write_text(textwrap.dedent("""\
        import json, os, grpc
        cluster = json.loads(os.environ["TF_CONFIG"])["cluster"]
        for address in cluster["ps"]:
            channel = grpc.insecure_channel(address)
            grpc.channel_ready_future(channel).result(timeout=20)
            channel.close()
            print("reached", address)
        """))
    status = launch([str(worker)], num_ps=2, num_workers=1, ps_servers=True, timeout=40)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert len([l for l in captured.out.splitlines()
                if l.startswith("[worker:0] reached 127.0.0.1:")]) == 2
    assert re.search(r"\[ps:1\] tensorweave-server: /job:ps/task:1 serving at "
                     r"grpc://127\.0\.0\.1:\d+", captured.err)
    # stopped by SIGTERM when the chief was done, cleanly
    assert "[ps:0] tensorweave-server: /job:ps/task:0 stopped" in captured.err
    assert "[ps:1] tensorweave-server: /job:ps/task:1 stopped" in captured.err


@pytest.mark.timeout(60)
def test_an_evaluator_is_outside_the_cluster_and_the_run_waits_for_it(script, capsys):
    """tf.estimator's evaluator: TF_CONFIG names the cluster and its task, which the
    cluster does not list; the run ends when the chief and the evaluator have exited."""
    argv, markers = script
    status = launch(argv + ["evaluator:0=wait:worker:0", "worker:0=exit:0"], num_ps=0,
                    num_workers=1, evaluator=True, timeout=30)
    assert status == 0
    out, err = capsys.readouterr()
    [cluster] = [json.loads(line[len("[evaluator:0] cluster "):])
                 for line in out.splitlines() if line.startswith("[evaluator:0] cluster ")]
    assert sorted(cluster) == ["worker"]
    assert "[evaluator:0] evaluator:0 saw worker:0" in out
    # the two exit in either order; the run ends at the second
    notes = [line for line in err.splitlines() if line.startswith("[launch] ")]
    assert notes in (
        ["[launch] the chief worker:0 exited with status 0; waiting for evaluator:0",
         "[launch] evaluator:0 exited with status 0; stopping the other tasks"],
        ["[launch] evaluator:0 exited with status 0; waiting for worker:0",
         "[launch] the chief worker:0 exited with status 0; stopping the other tasks"])
