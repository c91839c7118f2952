"""Distributed runtime figures, side by side with TensorFlow (issue 15).

Real task processes on 127.0.0.1 (`tf.train.Server(cluster, job, task).join()`, one
process per task, as tests/distribute/conftest.py) and clients on `grpc://` targets.
Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python; tensorweave under this interpreter); that child
starts the task processes and worker clients of its clusters with the same interpreter
and implementation, and stops them by pid (the parent also kills the child's whole
process group if the child fails or runs past its time limit).

1. OSDI 2016 Figure 6 in miniature: null training steps per second, 1 ps task and
   W = 1, 2, 4 worker tasks, a scalar and a 16 MB float32 variable on /job:ps/task:0.
   Between-graph replication: W client processes, client k runs its own Session on
   grpc://worker k (device_filters ps + its task) with the same graph; a null step reads
   the variable on /job:worker/task:k (PS -> worker), multiplies it by a fed scalar 0
   there (an update of the same size, not foldable) and `assign_add`s it on the ps
   (worker -> PS). The clients run the same fixed number of steps concurrently
   (sized from a warm-up to take about POINT_S seconds); steps/s = all workers' steps /
   (last client's end - first client's start).
2. EuroSys 2018 Figure 11 in miniature across tasks: a while_loop on /job:worker/task:0
   whose body (one float add) is on /job:worker/task:1; iterations/s = ITERS /
   best-block median step time (the shared instrument's `time_loop`, `summarize`).
   Targets (reported, not asserted): >= 20,000 iterations/s and >= TensorFlow's.
3. Transfer of one 64 MiB float32 variable on /job:worker/task:1 read by a reduce_sum on
   /job:worker/task:0 (only the sum comes back to the client): MiB/s per step, and net
   of the reduction (the same sum of a 64 MiB variable on task 0 itself, timed in the
   same run); next to the parent's loopback np.copyto bandwidth of 64 MiB.
4. Failure detection: a client thread runs null steps with
   RunOptions(timeout_in_ms=10000) on a fresh {ps: 1, worker: 1} cluster; the ps process
   gets SIGKILL; the figure is the time from the kill until the client's step raises
   (and which error it raises), median of up to 3 kills (1 when the first takes over
   FAIL_SLOW_S seconds).

Usage: [TF_PYTHON=...] python benchmarks/distributed.py OUT_JSON
"""
import json
import os
import signal
import subprocess
import sys
import time

from results import write_extra  # benchmarks/results.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
WORKERS = (1, 2, 4)
SIZES = {"scalar": [], "16MB": [4 * 1024 * 1024]}
CHILD_TIMEOUT_S = 170

# Code shared by the child, its task processes and its clients (params in argv[1]).
_COMMON = r"""
import json, os, select, signal, socket, subprocess, sys, threading, time
P = json.loads(sys.argv[1])
sys.path.insert(0, P["bench"]); sys.path.insert(0, P["src"])
import numpy as np
import bench
tf, info = bench.import_impl(P["impl"])


def null_step_graph(size, shape, task):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(tf.ones(shape), name="v_" + size)
        with tf.device("/job:worker/task:%d" % task):
            s = tf.placeholder(tf.float32, [], name="s")
            delta = tf.identity(v) * s
        with tf.device("/job:ps/task:0"):
            upd = tf.assign_add(v, delta)
    return g, v, s, upd


def session(spec, task, graph):
    return tf.Session("grpc://" + spec["worker"][task], graph=graph,
                      config=tf.ConfigProto(device_filters=[
                          "/job:ps", "/job:worker/task:%d" % task]))
"""

_TASK = _COMMON + r"""
tf.train.Server(P["spec"], P["job"], P["task"]).join()
"""

# A worker client: one Session per variable size on its own task's target; commands
# on stdin, replies on stdout as '@@' + JSON.
_CLIENT = _COMMON + r"""
sessions = {}


def reply(d):
    sys.stdout.write("@@" + json.dumps(d) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["cmd"] == "quit":
        break
    if cmd["size"] not in sessions:
        g, v, s, upd = null_step_graph(cmd["size"], cmd["shape"], P["task"])
        sessions[cmd["size"]] = (session(P["spec"], P["task"], g), s, upd.op)
    sess, s, op = sessions[cmd["size"]]
    feed = {s: np.float32(0.0)}
    if cmd["cmd"] == "prep":
        t0, k = time.perf_counter(), 0
        while k < 3 or time.perf_counter() - t0 < cmd["warm_s"]:
            sess.run(op, feed)
            k += 1
        reply({"per_step": (time.perf_counter() - t0) / k})
    elif cmd["cmd"] == "go":
        t0 = time.monotonic()
        for _ in range(cmd["steps"]):
            sess.run(op, feed)
        reply({"t0": t0, "t1": time.monotonic()})
for sess, _, _ in sessions.values():
    sess.close()
"""

_CHILD = _COMMON + r"""
PROCS = []


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def spawn(code, params, **kw):
    p = subprocess.Popen([sys.executable, "-c", code, json.dumps(dict(P, **params))], **kw)
    PROCS.append(p)
    return p


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait(timeout=10)
        if p in PROCS:
            PROCS.remove(p)


def start_cluster(jobs):
    spec = {job: ["localhost:%d" % free_port() for _ in range(n)] for job, n in jobs.items()}
    procs = {}
    for job, addrs in spec.items():
        for i in range(len(addrs)):
            procs[(job, i)] = spawn(_TASK_CODE, {"spec": spec, "job": job, "task": i},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    for (job, i), p in procs.items():
        port = int(spec[job][i].split(":")[1])
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if p.poll() is not None:
                    raise RuntimeError("task %s:%d exited with %s" % (job, i, p.returncode))
                if time.monotonic() > deadline:
                    raise RuntimeError("task %s:%d did not come up" % (job, i))
                time.sleep(0.05)
    return spec, procs


class Client:
    # A worker client process; `ask` writes one command, `answer` reads its reply
    # (bounded in time).
    def __init__(self, spec, task):
        self.p = spawn(_CLIENT_CODE, {"spec": spec, "task": task}, stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""

    def ask(self, **cmd):
        self.p.stdin.write((json.dumps(cmd) + "\n").encode())
        self.p.stdin.flush()

    def answer(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if line.startswith(b"@@"):
                    return json.loads(line[2:])
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("client %d: no reply in %.0f s" % (self.p.pid, timeout))
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError("client %d exited with %s"
                                       % (self.p.pid, self.p.wait(timeout=10)))
                self.buf += chunk


def figure6():
    # Null training steps per second, 1 ps and 1, 2, 4 workers, two variable sizes.
    spec, procs = start_cluster({"ps": 1, "worker": max(P["workers"])})
    clients = [Client(spec, k) for k in range(max(P["workers"]))]
    out = {}
    try:
        for size, shape in P["sizes"].items():
            g, v, s, upd = null_step_graph(size, shape, 0)
            with session(spec, 0, g) as sess:  # initialize, check one real update
                sess.run(v.initializer)
                sess.run(upd.op, {s: np.float32(1.0)})
                got = sess.run(v)
                bench.check(np.shape(got) == tuple(shape) and bool(np.all(got == 2.0)),
                            "null step update of %s" % size)
            for w in P["workers"]:
                for c in clients[:w]:
                    c.ask(cmd="prep", size=size, shape=shape, warm_s=P["warm_s"])
                per_step = max(c.answer(90)["per_step"] for c in clients[:w])
                steps = max(3, min(P["max_steps"], int(P["point_s"] / per_step)))
                for c in clients[:w]:
                    c.ask(cmd="go", size=size, shape=shape, steps=steps)
                ends = [c.answer(P["point_s"] * 10 + 30) for c in clients[:w]]
                wall = max(e["t1"] for e in ends) - min(e["t0"] for e in ends)
                out["%s, %d worker%s" % (size, w, "s" if w > 1 else "")] = {
                    "workers": w, "steps_per_worker": steps, "wall_s": wall,
                    "steps_per_s": w * steps / wall}
        for c in clients:
            c.ask(cmd="quit")
        for c in clients:
            c.p.wait(timeout=30)
    finally:
        stop([c.p for c in clients] + list(procs.values()))
    return out


def loop_and_transfer():
    spec, procs = start_cluster({"worker": 2})
    out = {}
    try:
        target = "grpc://" + spec["worker"][0]
        g = tf.Graph()
        with g.as_default():
            n = tf.placeholder(tf.int32, [], name="n")
            with tf.device("/job:worker/task:0"):
                def body(i, a):
                    with tf.device("/job:worker/task:1"):
                        a2 = tf.add(a, 1.0)
                    return i + 1, a2
                r = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0),
                                                             tf.constant(0.0)])
        with tf.Session(target, graph=g) as sess:
            iters = P["iters"]
            got = sess.run(r, {n: iters})
            bench.check(int(got[0]) == iters and float(got[1]) == iters, "loop result")
            fn = lambda: sess.run(r, {n: iters})
            samples = []
            bench.time_loop(fn, 0, 2)
            for _ in range(P["rounds"]):
                samples += bench.time_loop(fn, P["loop_steps"] // P["rounds"], 1)
            res = bench.summarize(samples, "s")
            out["loop"] = dict(res, iters=iters,
                               iterations_per_s=iters / res["best_block_median"])
        elems = P["transfer_mb"] * 1024 * 1024 // 4
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:worker/task:1"):
                far = tf.Variable(tf.ones([elems]), name="far")
            with tf.device("/job:worker/task:0"):
                near = tf.Variable(tf.ones([elems]), name="near")
                far_sum, near_sum = tf.reduce_sum(far), tf.reduce_sum(near)
            init = tf.global_variables_initializer()
        with tf.Session(target, graph=g) as sess:
            sess.run(init)
            for t in (far_sum, near_sum):
                bench.check(float(sess.run(t)) == float(elems), "sum of %s" % t.name)
            for key, t in (("remote", far_sum), ("local", near_sum)):
                samples = bench.time_loop(lambda: sess.run(t), P["transfer_steps"], 2)
                out[key] = bench.summarize(samples, "s")
    finally:
        stop(list(procs.values()))
    return out


def failure_once():
    spec, procs = start_cluster({"ps": 1, "worker": 1})
    try:
        g, v, s, upd = null_step_graph("scalar", [], 0)
        sess = session(spec, 0, g)
        sess.run(v.initializer)
        opts = tf.RunOptions(timeout_in_ms=10000)
        res = {}

        def loop():
            steps = 0
            try:
                while time.monotonic() < give_up:
                    sess.run(upd.op, {s: np.float32(0.0)}, options=opts)
                    steps += 1
            except Exception as e:
                res["t"] = time.monotonic()
                res["error"] = "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300])
            res["steps"] = steps

        give_up = time.monotonic() + 45
        th = threading.Thread(target=loop, daemon=True)
        th.start()
        time.sleep(0.5)
        t_kill = time.monotonic()
        procs[("ps", 0)].kill()
        th.join(60)
        if "t" not in res:
            return {"latency_s": None, "error": "no error within %.0f s of the kill"
                    % (time.monotonic() - t_kill), "steps": res.get("steps")}
        closer = threading.Thread(target=sess.close, daemon=True)
        closer.start()
        closer.join(10)
        return {"latency_s": res["t"] - t_kill, "error": res["error"],
                "steps_before": res["steps"]}
    finally:
        stop(list(procs.values()))


def failure():
    runs = [failure_once()]
    while (len(runs) < P["fail_reps"] and runs[0]["latency_s"] is not None
           and runs[0]["latency_s"] <= P["fail_slow_s"]):
        runs.append(failure_once())
    lat = sorted(r["latency_s"] for r in runs if r["latency_s"] is not None)
    return {"runs": runs, "median_s": lat[len(lat) // 2] if lat else None}


_TASK_CODE, _CLIENT_CODE = P["task_code"], P["client_code"]
out = {"impl": info.get("impl_version"), "cpus": os.cpu_count()}
t_start = time.monotonic()
try:
    out["figure6"] = figure6()
    out["t_figure6_s"] = time.monotonic() - t_start
    out.update(loop_and_transfer())
    out["t_loop_transfer_s"] = time.monotonic() - t_start
    out["failure"] = failure()
    out["t_total_s"] = time.monotonic() - t_start
finally:
    stop(list(PROCS))
sys.stdout.write("@@" + json.dumps(out) + "\n")
sys.stdout.flush()
os._exit(0)  # a client library may keep threads to dead tasks alive
"""


def measure(python: str, impl: str, params: dict) -> dict:
    """Runs the child for `impl` under `python`; its task and client processes share its
    process group, killed as a whole if the child fails or times out."""
    params = dict(params, bench=BENCH_DIR, src=SRC, impl=impl, task_code=_TASK,
                  client_code=_CLIENT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", GRPC_VERBOSITY="ERROR")
    child = subprocess.Popen([python, "-c", _CHILD, json.dumps(params)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # the child's leftover tasks/clients
        except ProcessLookupError:
            pass
        child.wait()
    lines = [x for x in stdout.splitlines() if x.startswith("@@")]
    if child.returncode != 0 or not lines:
        raise RuntimeError("%s child failed (%s):\n%s" % (impl, child.returncode,
                                                          stderr[-3000:]))
    return json.loads(lines[-1][2:])


def loopback_copy(mb: int, steps: int) -> float:
    """MiB/s of np.copyto of `mb` MiB of float32 in this process (best-block median)."""
    import numpy as np
    sys.path.insert(0, BENCH_DIR)
    import bench
    src = np.ones(mb * 1024 * 1024 // 4, np.float32)
    dst = np.empty_like(src)
    res = bench.summarize(bench.time_loop(lambda: np.copyto(dst, src), steps, 2), "s")
    return mb / res["best_block_median"]


def main(out_path: str, tf_python: str) -> None:
    params = {"workers": list(WORKERS), "sizes": SIZES, "point_s": 2.0, "warm_s": 0.5,
              "max_steps": 20000, "iters": 1000, "loop_steps": 10, "rounds": 5,
              "transfer_mb": 64, "transfer_steps": 10, "fail_reps": 3, "fail_slow_s": 5.0}
    t0 = time.monotonic()
    res = {"TensorFlow": measure(tf_python, "tensorflow", params),
           "tensorweave": measure(sys.executable, "tensorweave", params)}
    copy_mb_s = loopback_copy(params["transfer_mb"], 10)
    tf_r, tw_r = res["TensorFlow"], res["tensorweave"]
    figures = {"setup": "task processes on 127.0.0.1 (one per task, tf.train.Server.join), "
                        "clients over grpc://, default configs; TensorFlow %s; %d CPUs; "
                        "whole run %.0f s" % (tf_r["impl"], tw_r["cpus"],
                                              time.monotonic() - t0)}
    for key, a in tf_r["figure6"].items():
        b = tw_r["figure6"][key]
        figures["null steps/s, %s" % key] = (
            "TensorFlow %.1f steps/s (%d steps per worker), tensorweave %.1f steps/s "
            "(%d steps per worker): ratio %.2f" % (
                a["steps_per_s"], a["steps_per_worker"], b["steps_per_s"],
                b["steps_per_worker"], b["steps_per_s"] / a["steps_per_s"]))
    a, b = tf_r["loop"]["iterations_per_s"], tw_r["loop"]["iterations_per_s"]
    figures["while_loop, body on another task"] = (
        "TensorFlow %.0f iterations/s, tensorweave %.0f iterations/s (%d iterations per "
        "step, best-block median): ratio %.2f; targets >= 20000 iterations/s: %s, "
        ">= TensorFlow: %s" % (a, b, params["iters"], b / a,
                               "met" if b >= 20000 else "NOT met",
                               "met" if b >= a else "NOT met"))
    mb = params["transfer_mb"]

    def rates(r):
        remote, local = r["remote"]["best_block_median"], r["local"]["best_block_median"]
        return mb / remote, (mb / (remote - local) if remote > local else None)
    (ta, na), (tb, nb) = rates(tf_r), rates(tw_r)
    figures["64 MiB tensor from task 1 to task 0"] = (
        "TensorFlow %.0f MiB/s (%s net of the reduction), tensorweave %.0f MiB/s (%s net "
        "of the reduction): ratio %.2f; loopback np.copyto in this process %.0f MiB/s" % (
            ta, "%.0f" % na if na else "-", tb, "%.0f" % nb if nb else "-", tb / ta,
            copy_mb_s))
    fa, fb = tf_r["failure"], tw_r["failure"]

    def fail_text(f):
        if f["median_s"] is None:
            return "no error (%s)" % f["runs"][0]["error"]
        return "%.3f s (median of %d; raised %s)" % (
            f["median_s"], len([r for r in f["runs"] if r["latency_s"] is not None]),
            "; ".join(sorted({r["error"].split(":")[0] for r in f["runs"]})))
    ratio = ("%.2f" % (fb["median_s"] / fa["median_s"])
             if fa["median_s"] and fb["median_s"] else "-")
    figures["failure detection (ps killed, timeout_in_ms=10000)"] = (
        "TensorFlow %s, tensorweave %s: ratio %s (time, lower is better)" % (
            fail_text(fa), fail_text(fb), ratio))
    res["loopback_copy_mib_per_s"] = copy_mb_s
    write_extra(out_path, "Distributed runtime, side by side with TensorFlow (issue 15: "
                "OSDI Figure 6 and EuroSys Figure 11 in miniature, transfer, failure "
                "detection)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/distributed.py benchmarks/out/extra_distributed.json",
                figures, raw=res)


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], os.environ.get("TF_PYTHON") or default_tf)
