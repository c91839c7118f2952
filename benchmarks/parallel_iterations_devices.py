"""Parallel loop iterations across devices, side by side with TensorFlow (issue #14,
EuroSys 2018 Figure 12 in miniature across devices).

A tf.while_loop of ITERS iterations, each doing two independent heavy matmuls: iteration
i multiplies slice i of fed [ITERS, N, N] float32 tensors `xa` and `xb` by a
loop-invariant [N, N] matrix `w` (about 25 ms each single-threaded at N = 1000), takes
the column sums of both products and writes them, stacked, to a TensorArray. The loop
(counter, condition, TensorArray) is built under tf.device('/cpu:0'). Two placements:

  one device    both matmuls (with their gathers and column sums) on /cpu:0;
  two devices   the `xa` matmul on /cpu:0, the `xb` matmul on /cpu:1, so the two
                matmuls of an iteration, and with parallel_iterations > 1 those of
                several iterations, can run on the two devices at once.

Each is run with parallel_iterations 1, 2, 10 and 32. The only loop-carried values are
the counter and the TensorArray's flow. Both implementations run in their own
interpreter (TensorFlow under TF_PYTHON, default ~/.cache/tensorweave-bench-tf/bin/python;
tensorweave under this interpreter) with ConfigProto(device_count={'CPU': 2},
inter_op_parallelism_threads=2, intra_op_parallelism_threads=1) and BLAS pinned to one
thread (OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=MKL_NUM_THREADS=1 in the child's
environment), so any speedup comes from the executor overlapping matmuls, not from a
multi-threaded matmul. The ceiling is NumPy's: the same 2 * ITERS matmuls (and column
sums) called directly from 1 and from 2 Python threads (timed in the tensorweave child,
interleaved with its steps). Settings are timed round-robin (one step of each per round,
REPEATS rounds after a warm-up) so a slow spell of the shared machine hits every setting
alike; figures are medians. tensorweave's result must be identical to NumPy's in every
setting; TensorFlow's (Eigen matmuls) is checked with a tolerance and its largest
difference reported.

Usage: [TF_PYTHON=...] python benchmarks/parallel_iterations_devices.py OUT_JSON
"""
import json
import os
import subprocess
import sys

from results import write_extra  # benchmarks/results.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
N, ITERS = 1000, 8  # 2 * ITERS = 16 matmuls per step, as in parallel_iterations.py
SETTINGS = (1, 2, 10, 32)
PLACEMENTS = ("one device", "two devices")
REPEATS, WARMUP = 7, 1

_CHILD = r"""
import json, os, statistics, sys, threading, time
sys.path.insert(0, {bench!r}); sys.path.insert(0, {src!r})
import numpy as np
import bench
tf, info = bench.import_impl({impl!r})
N, ITERS, REPEATS, WARMUP = {n}, {iters}, {repeats}, {warmup}
EXACT = {impl!r} == "tensorweave"

rs = np.random.RandomState(0)
xa_v = rs.uniform(-1, 1, (ITERS, N, N)).astype(np.float32)
xb_v = rs.uniform(-1, 1, (ITERS, N, N)).astype(np.float32)
w_v = rs.uniform(-1, 1, (N, N)).astype(np.float32)
expected = np.stack([np.stack([np.sum(np.matmul(xa_v[i], w_v), axis=0),
                               np.sum(np.matmul(xb_v[i], w_v), axis=0)])
                     for i in range(ITERS)])


def build(second_device, pi):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            xa = tf.placeholder(tf.float32, [ITERS, N, N], name="xa")
            xb = tf.placeholder(tf.float32, [ITERS, N, N], name="xb")
            w = tf.placeholder(tf.float32, [N, N], name="w")
            ta = tf.TensorArray(tf.float32, size=ITERS, element_shape=[2, N])

            def body(i, acc):
                sa = tf.reduce_sum(tf.matmul(tf.gather(xa, i), w), axis=0)
                with tf.device(second_device):
                    sb = tf.reduce_sum(tf.matmul(tf.gather(xb, i), w), axis=0)
                return i + 1, acc.write(i, tf.stack([sa, sb]))

            _, acc = tf.while_loop(lambda i, acc: i < ITERS, body,
                                   [tf.constant(0), ta], parallel_iterations=pi)
            out = acc.stack()
    return g, (xa, xb, w), out


def session(g):
    return tf.Session(graph=g, config=tf.ConfigProto(
        device_count={{"CPU": 2}}, inter_op_parallelism_threads=2,
        intra_op_parallelism_threads=1))


out = {{"impl": info.get("impl_version"), "max_abs_diff": {{}}, "partitions": {{}},
        "sends": {{}}}}
runs, sessions = {{}}, []
for placement, dev in (("one device", "/cpu:0"), ("two devices", "/cpu:1")):
    for pi in {settings!r}:
        key = "%s, pi=%d" % (placement, pi)
        g, (xa, xb, w), fetch = build(dev, pi)
        sess = session(g)
        sessions.append(sess)
        feed = {{xa: xa_v, xb: xb_v, w: w_v}}
        md = tf.RunMetadata()
        got = sess.run(fetch, feed, options=tf.RunOptions(output_partition_graphs=True),
                       run_metadata=md)
        got = np.asarray(got)
        bench.check(got.dtype == np.float32 and got.shape == expected.shape,
                    key + ": dtype/shape")
        diff = float(np.max(np.abs(got - expected)))
        bench.check(np.array_equal(got, expected) if EXACT
                    else np.allclose(got, expected, rtol=1e-4, atol=1e-2),
                    key + ": result differs from NumPy (max abs diff %g)" % diff)
        out["max_abs_diff"][key] = diff
        out["partitions"][key] = len(md.partition_graphs)
        out["sends"][key] = sum(1 for pg in md.partition_graphs for x in pg.node
                                if x.op == "_Send")
        runs[key] = (lambda s, f, d: lambda: s.run(f, d))(sess, fetch, feed)


def numpy_run(threads):
    xs = [x for i in range(ITERS) for x in (xa_v[i], xb_v[i])]

    def work(k):
        for j in range(k, len(xs), threads):
            np.sum(np.matmul(xs[j], w_v), axis=0)

    def run():
        ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return run


if {with_numpy!r}:
    runs["numpy 1 thread"] = numpy_run(1)
    runs["numpy 2 threads"] = numpy_run(2)
for fn in runs.values():
    for _ in range(WARMUP):
        fn()
times = {{k: [] for k in runs}}
for _ in range(REPEATS):
    for k, fn in runs.items():
        t0 = time.perf_counter()
        fn()
        times[k].append(time.perf_counter() - t0)
for s in sessions:
    s.close()
out["median_s"] = {{k: statistics.median(v) for k, v in times.items()}}
out["min_s"] = {{k: min(v) for k, v in times.items()}}
out["max_s"] = {{k: max(v) for k, v in times.items()}}
print(json.dumps(out))
"""


def measure(python: str, impl: str) -> dict:
    code = _CHILD.format(bench=BENCH_DIR, src=SRC, impl=impl, n=N, iters=ITERS,
                         repeats=REPEATS, warmup=WARMUP, settings=SETTINGS,
                         with_numpy=impl == "tensorweave")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError("%s child failed:\n%s" % (impl, out.stderr[-3000:]))
    res = json.loads(out.stdout.strip().splitlines()[-1])
    for k in res["median_s"]:
        print("%-11s %-22s median %7.1f ms (min %.1f, max %.1f)" % (
            impl, k, res["median_s"][k] * 1e3, res["min_s"][k] * 1e3,
            res["max_s"][k] * 1e3), flush=True)
    return res


def main(out_path: str, tf_python: str) -> None:
    res = {"TensorFlow": measure(tf_python, "tensorflow"),
           "tensorweave": measure(sys.executable, "tensorweave")}
    tf_r, tw_r = res["TensorFlow"], res["tensorweave"]
    np_1, np_2 = tw_r["median_s"]["numpy 1 thread"], tw_r["median_s"]["numpy 2 threads"]
    figures = {
        "workload": "while_loop of %d iterations, each two independent %dx%d float32 "
                    "matmuls (+ column sums into a TensorArray), %d matmuls per step; "
                    "ConfigProto(device_count={'CPU': 2}, inter_op_parallelism_threads=2, "
                    "intra_op_parallelism_threads=1), BLAS 1 thread, %d CPU cores; "
                    "TensorFlow %s; median of %d round-robin steps"
                    % (ITERS, N, N, 2 * ITERS, os.cpu_count(), tf_r["impl"], REPEATS),
        "NumPy directly, 1 thread / 2 threads": "%.1f ms / %.1f ms (ceiling speedup "
                                                 "%.2fx)" % (np_1 * 1e3, np_2 * 1e3,
                                                             np_1 / np_2),
    }
    for pi in SETTINGS:
        parts = []
        for impl, r in res.items():
            one = r["median_s"]["one device, pi=%d" % pi]
            two = r["median_s"]["two devices, pi=%d" % pi]
            parts.append("%s %.1f ms on one device, %.1f ms on two (%d partitions, %d "
                         "_Send): speedup %.2fx" % (
                             impl, one * 1e3, two * 1e3,
                             r["partitions"]["two devices, pi=%d" % pi],
                             r["sends"]["two devices, pi=%d" % pi], one / two))
        figures["parallel_iterations=%d" % pi] = "; ".join(parts)
    for impl, r in res.items():
        m = r["median_s"]
        best = min(m["two devices, pi=%d" % pi] for pi in SETTINGS)
        figures["%s: best two-device step" % impl] = (
            "%.1f ms: %.2fx NumPy's 1-thread time (NumPy's 2-thread ceiling %.2fx), %.2f "
            "of NumPy's 2-thread rate; one device pi=1 -> two devices pi=10: %.2fx"
            % (best * 1e3, np_1 / best, np_1 / np_2, np_2 / best,
               m["one device, pi=1"] / m["two devices, pi=10"]))
    figures["tensorweave / TensorFlow step time, two devices"] = ", ".join(
        "pi=%d %.2f" % (pi, tw_r["median_s"]["two devices, pi=%d" % pi]
                        / tf_r["median_s"]["two devices, pi=%d" % pi]) for pi in SETTINGS)
    figures["results"] = ("tensorweave identical to NumPy in every setting; TensorFlow "
                          "within tolerance, largest abs difference %g"
                          % max(tf_r["max_abs_diff"].values()))
    write_extra(out_path, "Parallel loop iterations across devices, side by side with "
                "TensorFlow (issue #14, EuroSys Figure 12 in miniature)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/parallel_iterations_devices.py "
                "benchmarks/out/extra_parallel_iterations_devices.json",
                figures, raw=res)


if __name__ == "__main__":
    default_tf = os.path.expanduser("~/.cache/tensorweave-bench-tf/bin/python")
    main(sys.argv[1], os.environ.get("TF_PYTHON") or default_tf)
