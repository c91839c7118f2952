"""Steps across devices, side by side with TensorFlow (issue #14).

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python; tensorweave under this interpreter), both with
the same ConfigProto: device_count={'CPU': 2} and inter_op_parallelism_threads = the CPU
count (tensorweave's default, set explicitly for both). Timings use the shared
instrument's `time_loop` and `summarize` (../shared/bench/bench.py); the figure is
`best_block_median`. Each child first runs its steps once with
RunOptions(output_partition_graphs=True) and records the _Send nodes it runs, so the
figures say what each implementation really transfers.

(a) cross-device step: a scalar constant on CPU:0 consumed by tf.identity on CPU:1 and
    fetched. Graph optimizations are off in both (Grappler and L1 off for TensorFlow,
    opt_level L0 for tensorweave), since with them on tensorweave folds the constant
    through the identity and transfers nothing, while Grappler leaves a graph this small
    alone (min_graph_nodes); the default configuration is timed too, for context (the
    figures name the _Send nodes each ran). TensorFlow also sends every fetched value
    back to the client device (CPU:0), so its step holds two transfers to our one; the
    mirrored step (constant on CPU:1, identity and fetch on CPU:0) has one transfer in
    both. Target: tensorweave at most 0.3x TensorFlow's step time.
(b) Send/Recv cost per tensor: 8 float32 variables of 1, 1024 or 1048576 elements (4 B,
    4 KB, 4 MB) on CPU:0, each read by a tf.identity on CPU:1, run as targets (nothing
    fetched): the step time minus that of the same step with the identities on CPU:0,
    divided by 8. Cross-device and one-device steps are timed in alternating rounds. In-
    process sends pass references, so a 4 MB transfer should cost about what a 4 B one
    does (a copy of 4 MB is timed for comparison).

Usage: [TF_PYTHON=...] python benchmarks/devices.py OUT_JSON
"""
import json
import os
import subprocess
import sys

from results import write_extra  # benchmarks/results.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
SIZES = {"4 B": 1, "4 KB": 1024, "4 MB": 1 << 20}
PER_STEP = 8  # tensors sent per step in (b): the per-tensor cost is the difference / 8

_CHILD = r"""
import json, os, sys
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import numpy as np
import bench
tf, info = bench.import_impl({impl!r})
THREADS = os.cpu_count() or 1
STEPS, ROUNDS = {steps}, {rounds}


def config(raw):
    c = tf.ConfigProto(device_count={{"CPU": 2}}, inter_op_parallelism_threads=THREADS)
    if raw:
        c.graph_options.rewrite_options.disable_meta_optimizer = True
        c.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    return c


def sends(sess, fetch):
    md = tf.RunMetadata()
    sess.run(fetch, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    return sum(1 for g in md.partition_graphs for n in g.node if n.op == "_Send")


def timed(runs):
    # {{name: fn}} timed in ROUNDS alternating rounds: {{name: summary in us}}
    samples = {{k: [] for k in runs}}
    for fn in runs.values():
        bench.time_loop(fn, 0, max(STEPS // 10, 5))
    for _ in range(ROUNDS):
        for k, fn in runs.items():
            samples[k] += bench.time_loop(fn, STEPS // ROUNDS, 3)
    return {{k: bench.summarize(v, "us") for k, v in samples.items()}}


def cross_step(src, dst, raw):
    g = tf.Graph()
    with g.as_default():
        with tf.device(src):
            c = tf.constant(1.0, name="c")
        with tf.device(dst):
            y = tf.identity(c, name="y")
    sess = tf.Session(graph=g, config=config(raw))
    bench.check(float(sess.run(y)) == 1.0, "identity(1.0)")
    return sess, (lambda: sess.run(y)), sends(sess, y)


out = {{"impl": info.get("impl_version"), "threads": THREADS, "cross_step": {{}},
        "transfer": {{}}}}
sessions = []
runs, transfers = {{}}, {{}}
for name, src, dst, raw in (("cpu0->cpu1, optimizations off", "/cpu:0", "/cpu:1", True),
                            ("cpu1->cpu0, optimizations off", "/cpu:1", "/cpu:0", True),
                            ("cpu0->cpu1, default config", "/cpu:0", "/cpu:1", False),
                            ("one device, optimizations off", "/cpu:0", "/cpu:0", True)):
    sess, fn, n = cross_step(src, dst, raw)
    sessions.append(sess)
    runs[name], transfers[name] = fn, n
for name, r in timed(runs).items():
    r["sends"] = transfers[name]
    out["cross_step"][name] = r

for label, n in {sizes!r}.items():
    runs, transfers = {{}}, {{}}
    for where, dst in (("cross", "/cpu:1"), ("local", "/cpu:0")):
        g = tf.Graph()
        with g.as_default():
            with tf.device("/cpu:0"):
                vs = [tf.Variable(tf.zeros([n]), name="v%d" % k) for k in range({per_step})]
            with tf.device(dst):
                targets = [tf.identity(v, name="y%d" % k).op for k, v in enumerate(vs)]
        sess = tf.Session(graph=g, config=config(False))
        sessions.append(sess)
        sess.run([v.initializer for v in vs])
        bench.check(np.asarray(sess.run(targets[0].outputs[0])).shape == (n,),
                    "identity(v)")
        runs[where] = (lambda s, t: lambda: s.run(t))(sess, targets)
        transfers[where] = sends(sess, targets)
    res = timed(runs)
    out["transfer"][label] = {{w: dict(r, sends=transfers[w]) for w, r in res.items()}}
for s in sessions:
    s.close()
print(json.dumps(out))
"""


def measure(python: str, impl: str, steps: int, rounds: int) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, steps=steps, rounds=rounds,
                         sizes=SIZES, per_step=PER_STEP)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s child failed:\n%s" % (impl, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def _copy_cost_us(n: int) -> float:
    """best_block_median of one copy of n float32 values (what passing a copy would
    add to a transfer)."""
    sys.path.insert(0, BENCH_DIR)
    import bench
    import numpy as np
    src, dst = np.ones(n, np.float32), np.empty(n, np.float32)
    return bench.summarize(bench.time_loop(lambda: np.copyto(dst, src), 200, 20),
                           "us")["best_block_median"]


def main(out_path: str, tf_python: str, steps: int = 3000, rounds: int = 5) -> None:
    key = "best_block_median"
    res = {"TensorFlow": measure(tf_python, "tensorflow", steps, rounds),
           "tensorweave": measure(sys.executable, "tensorweave", steps, rounds)}
    tf_r, tw_r = res["TensorFlow"], res["tensorweave"]
    figures = {"setup": "ConfigProto(device_count={'CPU': 2}, inter_op_parallelism_threads="
                        "%d) for both; TensorFlow %s; %d steps per figure in %d alternating "
                        "rounds, best-block median" % (tw_r["threads"], tf_r["impl"], steps,
                                                       rounds)}
    for name in tw_r["cross_step"]:
        a, b = tf_r["cross_step"][name], tw_r["cross_step"][name]
        figures["cross-device step, %s" % name] = (
            "TensorFlow %.1f us (%d _Send), tensorweave %.1f us (%d _Send): ratio %.3f"
            % (a[key], a["sends"], b[key], b["sends"], b[key] / a[key]))
    main_step = "cpu0->cpu1, optimizations off"
    ratio = tw_r["cross_step"][main_step][key] / tf_r["cross_step"][main_step][key]
    figures["cross-device step ratio tensorweave / TensorFlow (target <= 0.3)"] = \
        "%.3f (%s)" % (ratio, "met" if ratio <= 0.3 else "NOT met")
    for label in SIZES:
        parts = []
        for impl, r in res.items():
            t = r["transfer"][label]
            cost = (t["cross"][key] - t["local"][key]) / PER_STEP
            parts.append("%s %.2f us ((%.1f - %.1f) / %d, %d _Send per step)" % (
                impl, cost, t["cross"][key], t["local"][key], PER_STEP,
                t["cross"]["sends"]))
        figures["Send/Recv cost per tensor, %s float32" % label] = ", ".join(parts)
    copy_us = _copy_cost_us(SIZES["4 MB"])
    for impl, r in res.items():
        small, big = ((r["transfer"][k]["cross"][key] - r["transfer"][k]["local"][key])
                      / PER_STEP for k in ("4 B", "4 MB"))
        figures["%s: per-tensor cost of 4 MB minus that of 4 B" % impl] = (
            "%.2f us (one 4 MB NumPy copy on this machine: %.1f us)" % (big - small,
                                                                        copy_us))
    write_extra(out_path, "Steps across devices, side by side with TensorFlow (issue #14)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/devices.py benchmarks/out/extra_devices.json", figures,
                raw={impl: r for impl, r in res.items()})


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], os.environ.get("TF_PYTHON") or default_tf)
