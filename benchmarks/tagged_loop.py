"""The general (tagged-token) loop executor against TensorFlow (issue #18).

Three loops, each implementation in its own interpreter (TensorFlow under TF_PYTHON,
default ~/.cache/tensorweave-bench-tf/bin/python, skipped if missing):

1. A while_loop of ITERS iterations whose body dequeues one element of a FIFOQueue
   (filled before each timed run): a kernel that may wait, so TensorFlow runs it on its
   general executor, and tensorweave did on its tagged executor until its structured
   executor learned to wait in place (policy.waits_in_place). The figure is
   microseconds per iteration, by default and with TW_EXECUTOR=tagged.
2. A trivial while_loop of ITERS iterations (i + 1, a + 1.0) that runs on tensorweave's
   tagged executor (TW_EXECUTOR=tagged in its interpreter: what a loop partitioned
   across tasks, or one with a kernel that cannot wait in place, runs on). The figure
   is microseconds per iteration; the same loop on the structured executor (the default
   for it) is shown for reference.
3. A loop of small matmuls with parallel_iterations=10: LOOP_N iterations, each writing
   reduce_sum(matmul(x, w + i)) of 64x64 float32 matrices into a TensorArray (iterations
   are independent, so they can overlap); tensorweave's choice of executor for it is its
   own (the default policy). The figure is the step time.

Medians over REPS runs after one untimed run (the shared instrument's time_loop and
summarize; the dequeue loop: the median of REPS of REPS + 1 timed runs, the slowest
dropped); ratios tensorweave / TensorFlow (lower is better; the issue's targets are
at most 1.0).

Usage: [TF_PYTHON=...] python benchmarks/tagged_loop.py [OUT_JSON] [--iters N]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_child, tf_python, write_extra

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
ITERS, LOOP_N, REPS = 100000, 1000, 5

_CHILD = r"""  # after results.CHILD_PREAMBLE

g = tf.Graph()
with g.as_default():
    n = tf.placeholder(tf.int32, [], name="n")
    r = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 1.0),
                      [tf.constant(0), tf.constant(0.0)])
with tf.Session(graph=g) as sess:
    got = sess.run(r, {n: 1000})
    bench.check(int(got[0]) == 1000 and float(got[1]) == 1000.0, "trivial loop result")
    res = bench.summarize(bench.time_loop(lambda: sess.run(r, {n: P["iters"]}), P["reps"], 1), "s")
    out["trivial_us_per_iteration"] = res["median"] / P["iters"] * 1e6

g = tf.Graph()
with g.as_default():
    q = tf.FIFOQueue(P["iters"] + 10, [tf.float32], shapes=[[]])
    vals = tf.placeholder(tf.float32, [None])
    fill = q.enqueue_many([vals])
    n = tf.placeholder(tf.int32, [])
    r = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + q.dequeue()),
                      [tf.constant(0), tf.constant(0.0)])
with tf.Session(graph=g) as sess:
    ones = np.ones(P["iters"], np.float32)

    def timed():
        sess.run(fill, {vals: ones})  # refilled outside the timed run
        t0 = time.perf_counter()
        got = sess.run(r, {n: P["iters"]})
        t1 = time.perf_counter()
        bench.check(int(got[0]) == P["iters"] and float(got[1]) == P["iters"],
                    "dequeue loop result")
        return t1 - t0
    times = sorted(timed() for _ in range(P["reps"] + 1))[:-1]  # the slowest dropped
    out["dequeue_us_per_iteration"] = times[len(times) // 2] / P["iters"] * 1e6

rs = np.random.RandomState(0)
xv = rs.rand(64, 64).astype(np.float32)
wv = (rs.rand(64, 64).astype(np.float32) - 0.5) * 0.1
g = tf.Graph()
with g.as_default():
    x = tf.constant(xv)
    w = tf.constant(wv)
    ta = tf.TensorArray(tf.float32, size=P["loop_n"])

    def body(i, ta):
        return i + 1, ta.write(i, tf.reduce_sum(tf.matmul(x, w + tf.cast(i, tf.float32))))
    _, ta = tf.while_loop(lambda i, ta: i < P["loop_n"], body, [tf.constant(0), ta],
                          parallel_iterations=10)
    sums = ta.stack()
with tf.Session(graph=g) as sess:
    got = sess.run(sums)
    want = np.array([(xv @ (wv + np.float32(k))).sum() for k in range(P["loop_n"])])
    bench.check(np.allclose(got, want, rtol=1e-4), "matmul loop result")
    res = bench.summarize(bench.time_loop(lambda: sess.run(sums), P["reps"] * 4, 1), "ms")
    out["matmul_loop_ms"] = res["median"]
print("@@" + json.dumps(out))
"""




def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    iters = int(argv[argv.index("--iters") + 1]) if "--iters" in argv else ITERS
    params = {"bench": BENCH_DIR, "src": SRC, "iters": iters, "loop_n": LOOP_N, "reps": REPS}
    tagged = run_child(_CHILD, sys.executable, "tensorweave", params, {"TW_EXECUTOR": "tagged"})
    default = run_child(_CHILD, sys.executable, "tensorweave", params)
    ref = run_child(_CHILD, tf_python(), "tensorflow", params) \
        if os.path.exists(tf_python()) else None
    figures = {"setup": "%d iterations (trivial loop), %d matmul iterations; medians of %d "
                        "runs" % (iters, LOOP_N, REPS)}
    def figure(key, unit, ours, other, other_name):
        """"tensorweave X unit (other_name Y), TensorFlow Z: ratio X/Z"."""
        text = "tensorweave %.2f %s (%s %.2f%s)" % (
            ours[key], unit, other_name, other[key], " ms" if unit == "ms" else "")
        if ref:
            text += ", TensorFlow %.2f: ratio %.2f (target <= 1.0)" % (
                ref[key], ours[key] / ref[key])
        return text
    figures["while_loop with a dequeue in its body (a kernel that may wait)"] = figure(
        "dequeue_us_per_iteration", "us/iteration", default, tagged, "forced tagged")
    figures["trivial while_loop, tagged executor"] = figure(
        "trivial_us_per_iteration", "us/iteration", tagged, default, "structured executor")
    figures["loop of 64x64 matmuls, parallel_iterations=10"] = figure(
        "matmul_loop_ms", "ms", default, tagged, "forced tagged")
    write_extra(out_path or os.devnull,
                "The tagged-token loop executor, side by side with TensorFlow (issue 18)",
                "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                "benchmarks/tagged_loop.py benchmarks/out/extra_tagged_loop.json",
                figures, results={"tagged": tagged, "default": default, "TensorFlow": ref})


if __name__ == "__main__":
    main(sys.argv)
