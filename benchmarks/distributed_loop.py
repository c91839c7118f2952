"""Distributed-loop overhead, side by side with TensorFlow (issue #14, EuroSys 2018
Figure 11 in miniature).

A trivial while_loop whose body is split across W = 1, 2 and 4 CPU devices: the loop
(counter, condition, Merge/Switch/NextIteration of every loop variable) is built under
tf.device('/cpu:0'), and loop variable k (a float32 scalar) is updated by one tf.add
placed on /cpu:k (`tf.device` per body op). With W > 1 every iteration sends the
predicate to each other device, and each body value to its device and back; each
device runs iterations on its own (the control-loop state machine of EuroSys Figure 6).

Each implementation runs in its own interpreter (TensorFlow under TF_PYTHON, default
~/.cache/tensorweave-bench-tf/bin/python; tensorweave under this interpreter), both with
ConfigProto(device_count={'CPU': 4}, inter_op_parallelism_threads = the CPU count). A
step runs ITERS iterations (fed); timings use the shared instrument's `time_loop` and
`summarize` (../shared/bench/bench.py): the figure is ITERS / best_block_median step
time, in iterations per second. Each child first checks the loop's result and counts
the _Send nodes of its partition graphs. Target: tensorweave's rate at least
TensorFlow's at each width.

tensorweave runs such a loop, split across CPU devices of one process, as one compiled
program (partitioned_plan.runs_fused: the devices share host memory, so the partitions'
Send/Recv would pass references); the figure of its partitioned machinery (Send/Recv of
the predicate each iteration, the Figure 6 state machine per device, which a remote
partition needs) is measured too, with TW_FUSE_HOST_PARTITIONS=0.

Usage: [TF_PYTHON=...] python benchmarks/distributed_loop.py OUT_JSON
"""
import json
import os
import subprocess
import sys

from results import write_extra  # benchmarks/results.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
WIDTHS = (1, 2, 4)

_CHILD = r"""
import json, os, sys
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import numpy as np
import bench
tf, info = bench.import_impl({impl!r})
THREADS = os.cpu_count() or 1
ITERS, STEPS, ROUNDS = {iters}, {steps}, {rounds}


def build(width):
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        with tf.device("/cpu:0"):
            def body(i, *xs):
                out = []
                for k, x in enumerate(xs):
                    with tf.device("/cpu:%d" % k):
                        out.append(tf.add(x, 1.0))
                return [i + 1] + out
            r = tf.while_loop(lambda i, *xs: i < n, body,
                              [tf.constant(0)] + [tf.constant(0.0)] * width)
    return g, n, r


out = {{"impl": info.get("impl_version"), "threads": THREADS, "widths": {{}}}}
for width in {widths!r}:
    g, n, r = build(width)
    sess = tf.Session(graph=g, config=tf.ConfigProto(
        device_count={{"CPU": 4}}, inter_op_parallelism_threads=THREADS))
    got = sess.run(r, {{n: ITERS}})
    bench.check(int(got[0]) == ITERS and all(float(v) == ITERS for v in got[1:]),
                "loop result")
    md = tf.RunMetadata()
    sess.run(r, {{n: ITERS}}, options=tf.RunOptions(output_partition_graphs=True),
             run_metadata=md)
    sends = sum(1 for pg in md.partition_graphs for x in pg.node if x.op == "_Send")
    fn = lambda: sess.run(r, {{n: ITERS}})
    samples = []
    bench.time_loop(fn, 0, 3)
    for _ in range(ROUNDS):
        samples += bench.time_loop(fn, STEPS // ROUNDS, 1)
    s = bench.summarize(samples, "s")
    out["widths"][str(width)] = dict(s, sends=sends, partitions=len(md.partition_graphs),
                                     iterations_per_s=ITERS / s["best_block_median"])
    sess.close()
print(json.dumps(out))
"""


def measure(python: str, impl: str, iters: int, steps: int, rounds: int,
            **environ) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, iters=iters, steps=steps,
                         rounds=rounds, widths=WIDTHS)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **environ)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s child failed:\n%s" % (impl, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(out_path: str, tf_python: str, iters: int = 1000, steps: int = 20,
         rounds: int = 5) -> None:
    res = {"TensorFlow": measure(tf_python, "tensorflow", iters, steps, rounds),
           "tensorweave": measure(sys.executable, "tensorweave", iters, steps, rounds),
           "tensorweave partitioned": measure(sys.executable, "tensorweave", iters, steps,
                                              rounds, TW_FUSE_HOST_PARTITIONS="0")}
    tf_r, tw_r = res["TensorFlow"], res["tensorweave"]
    part_r = res["tensorweave partitioned"]
    figures = {"setup": "ConfigProto(device_count={'CPU': 4}, inter_op_parallelism_threads="
                        "%d) for both; TensorFlow %s; %d iterations per step, %d steps in "
                        "%d rounds, best-block median" % (tw_r["threads"], tf_r["impl"],
                                                          iters, steps, rounds)}
    for w in WIDTHS:
        a, b = tf_r["widths"][str(w)], tw_r["widths"][str(w)]
        c = part_r["widths"][str(w)]
        ratio = b["iterations_per_s"] / a["iterations_per_s"]
        figures["body over %d device%s" % (w, "s" if w > 1 else "")] = (
            "TensorFlow %.0f iterations/s (%d partitions, %d _Send), tensorweave %.0f "
            "iterations/s (%d partitions, %d _Send): ratio %.2f (%s); tensorweave "
            "partitioned (TW_FUSE_HOST_PARTITIONS=0) %.0f iterations/s: ratio %.2f"
            % (a["iterations_per_s"], a["partitions"], a["sends"], b["iterations_per_s"],
               b["partitions"], b["sends"], ratio,
               "target met" if ratio >= 1.0 else "target NOT met", c["iterations_per_s"],
               c["iterations_per_s"] / a["iterations_per_s"]))
    write_extra(out_path, "Distributed-loop overhead, side by side with TensorFlow "
                "(issue #14, EuroSys Figure 11 in miniature)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/distributed_loop.py benchmarks/out/extra_distributed_loop.json",
                figures, raw=res)


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], os.environ.get("TF_PYTHON") or default_tf)
