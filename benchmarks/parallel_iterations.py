"""Parallel loop iterations (EuroSys 2018 §4.3 and Figure 12).

A tf.while_loop of ITERS iterations whose bodies are independent heavy matmuls: iteration
i takes slice i of a fed [ITERS, N, N] float32 tensor, multiplies it by a loop-invariant
[N, N] matrix (about 25 ms single-threaded at N = 1000) and writes the column sums of the
product to a TensorArray. The only loop-carried values are the counter and the
TensorArray's flow, so with parallel_iterations > 1 the executor may run the matmuls of
several iterations at once; with parallel_iterations = 1 they run one after the other,
like an out-of-graph loop driven by one thread.

BLAS and OpenMP (oneDNN's threads, where the `onednn` extra runs the float32 products) are
pinned to one thread (set below, before NumPy is imported) and the session has
inter_op_parallelism_threads=2, so any speedup comes from the executor overlapping
iterations on the two cores, not from a multi-threaded matmul. The figure of merit is the
ratio of median step times pi=1 / pi=10; the ceiling is what two Python threads calling
the same matmuls directly reach (measured too). Every setting's output is checked to be
equal to a NumPy reference (to float32 rounding). The same loop under TensorFlow gives
its speedup for comparison. Writes an extra-figures JSON for results.py.

Usage: python benchmarks/parallel_iterations.py OUT_JSON
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads its BLAS
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tensorweave as tf  # noqa: E402
from results import write_extra  # noqa: E402 (benchmarks/ is the script's path)
from tensorweave.ops import onednn  # noqa: E402

N, ITERS = 1000, 16
THREADS = 2
SETTINGS = (1, 2, 10, 32)
REPEATS, WARMUP = 11, 1


def inputs():
    rs = np.random.RandomState(0)
    xs = rs.uniform(-1, 1, (ITERS, N, N)).astype(np.float32)
    w = rs.uniform(-1, 1, (N, N)).astype(np.float32)
    return xs, w


def reference(xs, w):
    return np.stack([np.sum(np.matmul(xs[i], w), axis=0) for i in range(ITERS)])


def build(parallel_iterations: int):
    """The loop graph: (placeholders, fetch)."""
    xs = tf.placeholder(tf.float32, [ITERS, N, N], name="xs")
    w = tf.placeholder(tf.float32, [N, N], name="w")
    ta = tf.TensorArray(tf.float32, size=ITERS, element_shape=[N])

    def body(i, acc):
        y = tf.matmul(tf.gather(xs, i), w)  # no dependence on earlier iterations' y
        return i + 1, acc.write(i, tf.reduce_sum(y, axis=0))

    _, acc = tf.while_loop(lambda i, acc: i < ITERS, body, [tf.constant(0), ta],
                           parallel_iterations=parallel_iterations)
    return xs, w, acc.stack()


def interleaved(runs: dict) -> dict:
    """Times of REPEATS calls of each run, taken round-robin (one call of each per
    round) so that a slow spell of a shared machine hits every setting alike."""
    for run in runs.values():
        for _ in range(WARMUP):
            run()
    times = {k: [] for k in runs}
    for _ in range(REPEATS):
        for k, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t0)
    return times


def loop_run(parallel_iterations: int, xs_v, w_v, expected):
    """A session running the loop (checked against NumPy first): (run, close)."""
    graph = tf.Graph()
    with graph.as_default():
        xs, w, out = build(parallel_iterations)
    sess = tf.Session(graph=graph,
                      config=tf.ConfigProto(inter_op_parallelism_threads=THREADS))
    feed = {xs: xs_v, w: w_v}
    got = sess.run(out, feed)
    # the column sums may add in another order than np.sum's (reduction_ops' blocked
    # sums): equal to float32 rounding
    if got.dtype != np.float32 or not np.allclose(got, expected, rtol=1e-5, atol=1e-3):
        raise AssertionError("parallel_iterations=%d: result differs from NumPy (max abs "
                             "diff %g)" % (parallel_iterations,
                                          np.max(np.abs(got - expected))))
    return (lambda: sess.run(out, feed)), sess.close


def numpy_run(xs_v, w_v, threads: int):
    """The same matmuls (and column sums) called directly from `threads` Python threads,
    iterations dealt round-robin: the ceiling for the executor on this machine."""
    def work(k):
        for i in range(k, ITERS, threads):
            np.sum(np.matmul(xs_v[i], w_v), axis=0)

    def run():
        ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    return run


# The same loop under TensorFlow (TF_PYTHON, default the bench environment; skipped if
# missing), with one intra-op thread (its BLAS) and THREADS inter-op threads, as here:
# its own speedup pi=10 vs pi=1 is the comparison for the executor (step times differ
# by the BLAS: TensorFlow's oneDNN against NumPy's OpenBLAS).
_TF_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
N, ITERS, THREADS, REPEATS = (int(a) for a in sys.argv[1:5])
rs = np.random.RandomState(0)
xs_v = rs.uniform(-1, 1, (ITERS, N, N)).astype(np.float32)
w_v = rs.uniform(-1, 1, (N, N)).astype(np.float32)
runs = {}
for pi in (1, 10):
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, [ITERS, N, N])
        w = tf.placeholder(tf.float32, [N, N])
        ta = tf.TensorArray(tf.float32, size=ITERS, element_shape=[N])
        _, acc = tf.while_loop(
            lambda i, acc: i < ITERS,
            lambda i, acc: (i + 1, acc.write(i, tf.reduce_sum(tf.matmul(tf.gather(xs, i), w),
                                                             axis=0))),
            [tf.constant(0), ta], parallel_iterations=pi)
        out = acc.stack()
    sess = tf.Session(graph=g, config=tf.ConfigProto(
        inter_op_parallelism_threads=THREADS, intra_op_parallelism_threads=1))
    feed = {xs: xs_v, w: w_v}
    sess.run(out, feed)
    runs[pi] = (sess, out, feed)
times = {pi: [] for pi in runs}
for _ in range(REPEATS):
    for pi, (sess, out, feed) in runs.items():
        t0 = time.perf_counter()
        sess.run(out, feed)
        times[pi].append(time.perf_counter() - t0)
print("@@" + json.dumps({pi: statistics.median(v) for pi, v in times.items()}))
"""


def tensorflow_medians():
    """{1: median s, 10: median s} of the loop under TensorFlow, or None."""
    import subprocess
    python = os.environ.get("TF_PYTHON", os.path.expanduser(
        "~/.cache/tensorweave-bench-tf/bin/python"))
    if not os.path.exists(python):
        return None
    p = subprocess.run([python, "-c", _TF_CHILD, str(N), str(ITERS), str(THREADS),
                        str(REPEATS)], capture_output=True, text=True, timeout=900)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("@@")]
    if p.returncode != 0 or not lines:
        raise RuntimeError("TensorFlow child failed:\n" + p.stderr[-3000:])
    return {int(k): v for k, v in json.loads(lines[-1][2:]).items()}


def main(out_path: str) -> None:
    xs_v, w_v = inputs()
    expected = reference(xs_v, w_v)
    runs = {"numpy 1": numpy_run(xs_v, w_v, 1),
            "numpy %d" % THREADS: numpy_run(xs_v, w_v, THREADS)}
    closers = []
    for pi in SETTINGS:
        runs[pi], close = loop_run(pi, xs_v, w_v, expected)
        closers.append(close)
    try:
        times = interleaved(runs)
    finally:
        for close in closers:
            close()
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print("%-10s median %.1f ms (min %.1f, max %.1f)" % (
            k, med[k] * 1e3, min(v) * 1e3, max(v) * 1e3), flush=True)
    np_1, np_2 = med["numpy 1"], med["numpy %d" % THREADS]
    figures = {
        "workload": "while_loop of %d independent %dx%d float32 matmuls (+ column sums "
                    "into a TensorArray), inter_op_parallelism_threads=%d, BLAS 1 thread, "
                    "%d CPU cores; median of %d steps" % (ITERS, N, N, THREADS,
                                                         os.cpu_count(), REPEATS),
        "NumPy directly, 1 thread / %d threads" % THREADS: "%.1f ms / %.1f ms (ceiling "
            "speedup %.2fx)" % (np_1 * 1e3, np_2 * 1e3, np_1 / np_2),
    }
    for pi in SETTINGS:
        figures["step time, parallel_iterations=%d" % pi] = "%.1f ms (%.1f ms/iteration, "\
            "speedup vs pi=1 %.2fx)" % (med[pi] * 1e3, med[pi] / ITERS * 1e3,
                                          med[1] / med[pi])
    figures["speedup parallel_iterations=10 vs 1"] = "%.2fx (results equal to NumPy's "\
        "in every setting)" % (med[1] / med[10])
    ref = tensorflow_medians()
    if ref is not None:
        figures["TensorFlow, same loop (1 intra-op, %d inter-op threads)" % THREADS] = (
            "pi=1 %.1f ms, pi=10 %.1f ms: speedup %.2fx (tensorweave %.2fx); step time "
            "ratio tensorweave / TensorFlow at pi=10: %.2f (the matmuls: %s here, "
            "oneDNN there)" % (ref[1] * 1e3, ref[10] * 1e3, ref[1] / ref[10],
                               med[1] / med[10], med[10] / ref[10],
                               "oneDNN" if onednn.available() else "OpenBLAS"))
    write_extra(out_path, "Parallel loop iterations (EuroSys 2018 Figure 12)",
                "python benchmarks/parallel_iterations.py "
                "benchmarks/out/extra_parallel_iterations.json", figures)


if __name__ == "__main__":
    main(sys.argv[1])
