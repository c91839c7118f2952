"""Executor dispatch rate and start-up figures that the shared instrument does not report.

- null ops per second with every graph optimization off (OSDI 2016 §5 quotes 2M/s);
- `import tensorweave` wall time in a fresh interpreter (median of 5);
- two independent 2000x2000 matmuls in one step vs. the same two in sequence.
Writes a JSON file for benchmarks/results.py.  Usage: python benchmarks/executor_raw.py OUT
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import tensorweave as tf
from results import write_extra  # benchmarks/results.py (this script's folder)


def _median_time(fn, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def null_ops_raw():
    g = tf.Graph()
    with g.as_default():
        grp = tf.group(*[tf.no_op() for _ in range(10000)])
    cfg = tf.ConfigProto()
    cfg.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    with tf.Session(graph=g, config=cfg) as sess:
        sess.run(grp)
        return 10000 / _median_time(lambda: sess.run(grp), 50)


def import_time():
    """Median wall time of `import tensorweave` in fresh interpreters, with bytecode
    caching on as for any installed package (the first, warming import is not timed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = "import time; t=time.perf_counter(); import tensorweave; print(time.perf_counter()-t)"
    subprocess.check_output([sys.executable, "-c", "import tensorweave"], env=env)
    runs = [float(subprocess.check_output([sys.executable, "-c", code], env=env))
            for _ in range(5)]
    return statistics.median(runs)


def parallel_matmuls():
    """Two independent 2000x2000 matmuls of fed inputs (constants would be folded at plan
    time) with one and with two inter-op threads."""
    rs = np.random.RandomState(0)
    a_np = rs.rand(2000, 2000).astype(np.float32)
    b_np = rs.rand(2000, 2000).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2000, 2000])
        b = tf.placeholder(tf.float32, [2000, 2000])
        m1 = tf.matmul(a, b)
        m2 = tf.matmul(b, a)
    feed = {a: a_np, b: b_np}
    out = {}
    for threads in (1, 2):
        cfg = tf.ConfigProto(inter_op_parallelism_threads=threads)
        with tf.Session(graph=g, config=cfg) as sess:
            sess.run([m1, m2], feed)
            out[threads] = _median_time(lambda: sess.run([m1, m2], feed), 7)
    return out


def main(out_path):
    times = parallel_matmuls()
    figures = {
        "null ops/s, optimizations off (target >= 2,000,000)": "%.0f" % null_ops_raw(),
        "import tensorweave, median of 5 fresh interpreters (target < 0.3 s)":
            "%.3f s" % import_time(),
        "two independent 2000x2000 matmuls, inter_op_parallelism_threads=1": "%.1f ms"
            % (times[1] * 1e3),
        "the same, inter_op_parallelism_threads=2": "%.1f ms (speed-up %.2fx)"
            % (times[2] * 1e3, times[1] / times[2]),
    }
    write_extra(out_path, "Executor figures (issue #2)",
                "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "
                "python benchmarks/executor_raw.py benchmarks/out/extra_executor.json", figures)


if __name__ == "__main__":
    main(sys.argv[1])
