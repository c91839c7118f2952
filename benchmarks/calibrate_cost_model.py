"""Fits the constants of the cost-model placer (runtime/placer.py, CostModel) to this
machine, measuring through tensorweave itself (Session.run, warmed up, best of
repetitions; graph optimizations off, opt_level L0, so that nothing is folded away).

  op_overhead_s            the slope per op of a step running a chain of N adds on a
                           4-element float32 tensor (N = 50 and 400).
  flops_per_second         n x n float32 matmuls (n = 256, 512, 1024) minus the step of
                           an Identity of the same input: 2 n^3 / time. Measured with one
                           BLAS thread (a child process with OPENBLAS/OMP/MKL_NUM_THREADS
                           = 1) and with the library's default; the fit is the one-thread
                           rate at the largest size, since the placer simulates devices
                           running side by side, one core each.
  elements_per_second      an add of two float32 arrays of 4M elements minus the step of
                           an Identity of one of them: elements / time (memory-bound).
  host_transfer_latency_s  per Send/Recv pair between CPU:0 and CPU:1 of one process: 8
                           constants on CPU:0 read by Identities on CPU:1, run as targets,
                           minus the same step with the Identities on CPU:0, / 8. Sizes
                           4 B and 4 MB: references pass, so bytes cost nothing.
  device_transfer_latency_s, device_bytes_per_second
                           the same with the Identities on the simulated accelerator
                           (ConfigProto(device_count={'CPU': 1, 'SIM': 1})), whose
                           values cross by copies: latency from 4 B, bytes/s from the
                           difference between 4 MB and 4 B.

Usage: python benchmarks/calibrate_cost_model.py OUT_JSON
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
import tensorweave as tf  # noqa: E402
from results import write_extra  # noqa: E402  (benchmarks/results.py)

REPS, INNER = 7, 20  # best of REPS blocks; each block's time / INNER runs
PER_STEP = 8  # tensors sent per step of the transfer measurements


def _config(device_count):
    c = tf.ConfigProto(device_count=device_count)
    c.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    return c


def _best_seconds(fn, inner=INNER, reps=REPS) -> float:
    """Seconds per call of `fn`: warm, then the best of `reps` blocks of `inner` calls."""
    for _ in range(max(2, inner // 4)):
        fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def _step(build, device_count=None, feeds=None, inner=INNER):
    """Best seconds of one Session.run of the fetches `build()` returns (in a new graph)."""
    g = tf.Graph()
    with g.as_default():
        fetches = build()
    with tf.Session(graph=g, config=_config(device_count or {"CPU": 1})) as sess:
        feed = {g.get_tensor_by_name(k): v for k, v in (feeds or {}).items()}
        return _best_seconds(lambda: sess.run(fetches, feed), inner)


def op_overhead() -> dict:
    def chain(n):
        def build():
            h = tf.placeholder(tf.float32, [4], name="x")
            one = tf.constant(np.ones(4, np.float32))
            for _ in range(n):
                h = tf.add(h, one)
            return h.op
        return build
    feeds = {"x:0": np.ones(4, np.float32)}
    short, long_ = 50, 400
    t_short = _step(chain(short), feeds=feeds)
    t_long = _step(chain(long_), feeds=feeds)
    return {"op_overhead_s": (t_long - t_short) / (long_ - short),
            "chain_of_%d_adds_s" % short: t_short, "chain_of_%d_adds_s" % long_: t_long}


def matmul_rates() -> dict:
    """{n: FLOP/s} of n x n float32 matmuls with this process's BLAS threads."""
    rates = {}
    for n in (256, 512, 1024):
        xv = np.random.RandomState(0).rand(n, n).astype(np.float32)
        inner = max(2, int(4e8 / n ** 3))

        def build(op):
            def b():
                x = tf.placeholder(tf.float32, [n, n], name="x")
                return op(x).op
            return b
        t_mm = _step(build(lambda x: tf.matmul(x, x)), feeds={"x:0": xv}, inner=inner)
        t_id = _step(build(tf.identity), feeds={"x:0": xv}, inner=inner)
        rates[n] = 2.0 * n ** 3 / max(t_mm - t_id, 1e-9)
    return rates


def elementwise_rate() -> dict:
    n = 1 << 22
    xv = np.random.RandomState(0).rand(n).astype(np.float32)

    def build(op):
        def b():
            x = tf.placeholder(tf.float32, [n], name="x")
            y = tf.placeholder(tf.float32, [n], name="y")
            return op(x, y).op
        return b
    feeds = {"x:0": xv, "y:0": xv[::-1].copy()}
    t_add = _step(build(tf.add), feeds=feeds, inner=10)
    t_id = _step(build(lambda x, y: tf.identity(x)), feeds=feeds, inner=10)
    return {"elements_per_second": n / max(t_add - t_id, 1e-9), "add_4M_s": t_add}


def transfer(dst: str, device_count: dict) -> dict:
    """{size in bytes: seconds per transfer} from CPU:0 to `dst` (8 per step)."""
    out = {}
    for nbytes in (4, 4 << 20):
        n = nbytes // 4
        times = {}
        for where in (dst, "/cpu:0"):
            def build(where=where):
                with tf.device("/cpu:0"):
                    cs = [tf.constant(np.full(n, k, np.float32)) for k in range(PER_STEP)]
                with tf.device(where):
                    return [tf.identity(c).op for c in cs]
            times[where] = _step(build, device_count, inner=20 if n < 1000 else 5)
        out[nbytes] = (times[dst] - times["/cpu:0"]) / PER_STEP
    return out


def _one_thread_matmul_rates() -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    code = ("import json, sys; sys.path.insert(0, %r); import calibrate_cost_model as c; "
            "print(json.dumps(c.matmul_rates()))" % HERE)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def main(argv) -> None:
    if len(argv) != 2:
        sys.exit(__doc__.rsplit("Usage: ", 1)[1])
    overhead = op_overhead()
    mm_one = _one_thread_matmul_rates()
    mm_default = matmul_rates()
    elementwise = elementwise_rate()
    host = transfer("/cpu:1", {"CPU": 2})
    sim = transfer("/device:SIM:0", {"CPU": 1, "SIM": 1})
    small, large = 4, 4 << 20
    fitted = {
        "op_overhead_s": overhead["op_overhead_s"],
        "flops_per_second": mm_one[max(mm_one)],
        "elements_per_second": elementwise["elements_per_second"],
        "host_transfer_latency_s": max(host[small], 0.0),
        "device_transfer_latency_s": max(sim[small], 0.0),
        "device_bytes_per_second": (large - small) / max(sim[large] - sim[small], 1e-12),
    }
    figures = {"fitted %s" % k: "%.3g" % v for k, v in fitted.items()}
    figures.update({"matmul %dx%d, 1 BLAS thread" % (n, n): "%.3g FLOP/s" % r
                    for n, r in mm_one.items()})
    figures.update({"matmul %dx%d, default BLAS threads" % (n, n): "%.3g FLOP/s" % r
                    for n, r in mm_default.items()})
    figures.update({k: "%.3g s" % v for k, v in overhead.items() if k != "op_overhead_s"})
    figures["add of 4M float32, step"] = "%.3g s" % elementwise["add_4M_s"]
    figures.update({"CPU:0->CPU:1 transfer of %d B" % b: "%.3g s" % s
                    for b, s in host.items()})
    figures.update({"CPU:0->SIM:0 copy of %d B" % b: "%.3g s" % s for b, s in sim.items()})
    write_extra(argv[1], "Cost-model placer calibration",
                "python benchmarks/calibrate_cost_model.py OUT_JSON", figures,
                fitted=fitted, cores=os.cpu_count())


if __name__ == "__main__":
    main(sys.argv)
